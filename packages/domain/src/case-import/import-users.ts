import { and, eq, inArray, notInArray } from "drizzle-orm";
import { caseImportRecords, profiles, users } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { normalizeEmail } from "../participant-accounts/password-reset";
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  caseAccountUuid,
  contentHash,
  documentId,
  isObjectIdHex,
  toPlain,
  unixSecondsDate,
  type CaseDocument,
} from "./case-values";
import { absentAccounts } from "./import-absent";
import { INSERTED, skipped, UNCHANGED, UPDATED, type CollectionImporter, type DocumentOutcome } from "./import-batch";

/**
 * The participant accounts of a CASE instance (`<prefix><instance>_users`.`users`, case-backend's
 * pkg/user-management/types User): the account with its argon2id hash exactly as stored, which
 * sign-in verifies and then stores again with studyflow's parameters, and the profiles with the
 * ids their participant ids are derived from.
 */

type UserRow = typeof users.$inferInsert;
type ProfileRow = typeof profiles.$inferInsert;

interface AccountPlan {
  sourceId: string;
  email: string;
  user: Omit<UserRow, "id">;
  profiles: Omit<ProfileRow, "userId">[];
  kept: Record<string, unknown>;
}

function planAccount(document: CaseDocument): AccountPlan | string {
  const sourceId = documentId(document);
  if (!isObjectIdHex(sourceId)) return "the account's _id is not an ObjectId";
  const account = asRecord(document["account"]);
  const type = asString(account["type"]);
  if (type !== "email") return `account type "${type}" is not carried (only e-mail accounts)`;
  const email = normalizeEmail(asString(account["accountID"]));
  if (!email.includes("@")) return `accountID "${email}" is not an e-mail address`;
  const passwordHash = asString(account["password"]);
  if (!passwordHash.startsWith("$argon2id$")) {
    return "the password is not an argon2id hash as case-backend's pwhash writes it, so it could never sign in";
  }
  const timestamps = asRecord(document["timestamps"]);
  const preferences = asRecord(document["contactPreferences"]);
  const weekday = asNumber(preferences["receiveWeeklyMessageDayOfWeek"]);
  const profileRows: AccountPlan["profiles"] = [];
  for (const [i, entry] of asArray(document["profiles"]).entries()) {
    const profile = asRecord(entry);
    const id = toPlain(profile["_id"]);
    if (typeof id !== "string" || id === "") return `profiles[${i}] has no id`;
    profileRows.push({
      id,
      alias: asString(profile["alias"]),
      mainProfile: profile["mainProfile"] === true,
      avatarId: asString(profile["avatarID"]) || "default",
      consentConfirmedAt: unixSecondsDate(profile["consentConfirmedAt"]),
      createdAt: unixSecondsDate(profile["createdAt"]) ?? unixSecondsDate(timestamps["createdAt"]) ?? new Date(0),
    });
  }
  if (new Set(profileRows.map((profile) => profile.id)).size !== profileRows.length) return "two profiles share an id";
  return {
    sourceId,
    email,
    user: {
      email,
      passwordHash,
      preferredLanguage: asString(account["preferredLanguage"]) || "en",
      accountConfirmedAt: unixSecondsDate(account["accountConfirmedAt"]),
      subscribedToNewsletter: preferences["subscribedToNewsletter"] === true,
      subscribedToWeekly: preferences["subscribedToWeekly"] === true,
      weeklyMessageDayOfWeek: weekday >= 0 && weekday <= 6 ? weekday : 0,
      lastLoginAt: unixSecondsDate(timestamps["lastLogin"]),
      passwordChangedAt: unixSecondsDate(timestamps["lastPasswordChange"]),
      verificationReminderSentAt: unixSecondsDate(timestamps["reminderToConfirmSentAt"]),
      createdAt: unixSecondsDate(timestamps["createdAt"]) ?? new Date(0),
    },
    profiles: profileRows,
    // studyflow has no column for these yet: kept with the import record for a later step
    kept: {
      contactInfos: toPlain(document["contactInfos"]),
      sendNewsletterTo: toPlain(preferences["sendNewsletterTo"]),
      timestamps: toPlain(timestamps),
      authType: asString(account["authType"]),
    },
  };
}

/** `users`: each account under the users.id case_import_records gives it, or a new one from its ObjectId. */
export function usersImporter(replace: boolean, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentAccounts,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const plan = planAccount(document);
        if (typeof plan === "string") {
          outcomes.push(skipped(plan));
          continue;
        }
        const hash = contentHash(bytes);
        const [record] = await tx
          .select()
          .from(caseImportRecords)
          .where(and(eq(caseImportRecords.kind, "user"), eq(caseImportRecords.sourceId, plan.sourceId)));
        const [byEmail] = await tx.select({ id: users.id }).from(users).where(eq(users.email, plan.email));
        const [byRecord] = record
          ? await tx.select({ id: users.id }).from(users).where(eq(users.id, record.targetId))
          : [];
        if (record && byRecord && record.contentHash === hash) {
          outcomes.push(UNCHANGED);
          continue;
        }
        if (byEmail && byEmail.id !== byRecord?.id && !replace) {
          outcomes.push(skipped(`studyflow already has an account ${plan.email}; --replace overwrites it`));
          continue;
        }
        const userId = byRecord?.id ?? byEmail?.id ?? caseAccountUuid(plan.sourceId);
        const existing = byRecord ?? byEmail;
        const profileIds = plan.profiles.map((profile) => profile.id!);
        if (profileIds.length > 0) {
          const taken = await tx
            .select({ id: profiles.id })
            .from(profiles)
            .where(and(inArray(profiles.id, profileIds), notInArray(profiles.userId, [userId])));
          if (taken.length > 0) {
            outcomes.push(skipped(`profile ${taken[0]!.id} belongs to another studyflow account`));
            continue;
          }
        }
        if (write) {
          if (existing) {
            // the account as CASE has it now: the e-mail of another import of it, or --replace
            await tx.update(users).set(plan.user).where(eq(users.id, userId));
            await tx
              .delete(profiles)
              .where(
                profileIds.length > 0
                  ? and(eq(profiles.userId, userId), notInArray(profiles.id, profileIds))
                  : eq(profiles.userId, userId),
              );
          } else {
            await tx.insert(users).values({ id: userId, ...plan.user });
          }
          for (const profile of plan.profiles) {
            const { id: _id, ...fields } = profile;
            await tx
              .insert(profiles)
              .values({ ...profile, userId })
              .onConflictDoUpdate({ target: profiles.id, set: fields });
          }
          const recordRow = { targetId: userId, contentHash: hash, kept: plan.kept, importedAt: new Date(ctx.clock()) };
          await tx
            .insert(caseImportRecords)
            .values({ kind: "user", sourceId: plan.sourceId, ...recordRow })
            .onConflictDoUpdate({ target: [caseImportRecords.kind, caseImportRecords.sourceId], set: recordRow });
        }
        outcomes.push(existing ? UPDATED : INSERTED);
      }
      return outcomes;
    },
  };
}
