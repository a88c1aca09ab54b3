import { and, eq, inArray, like, sql } from "drizzle-orm";
import {
  apiKeys,
  appRoles,
  appRoleTemplates,
  caseImportRecords,
  confidentialIdMap,
  confidentialResponses,
  emailTemplates,
  outgoingMessages,
  participantFiles,
  permissions,
  profiles,
  researcherMessages,
  smsTemplates,
  studyCodeLists,
  type Database,
  type Executor,
} from "@studyflow/db";
import { hashApiKey } from "../access/api-keys";
import { forgetCached } from "../cache/read-cache";
import { NotFound } from "../errors";
import { recordAudit } from "../foundation/audit";
import type { ClockContext } from "../foundation/clock";
import { removeManagementUser } from "../management-users/admin";
import { deleteSubjectPermission } from "../management-users/permissions";
import { deleteServiceAccount } from "../management-users/service-accounts";
import { deleteEmailTemplate } from "../messages/case-email-templates";
import { deleteScheduledEmail } from "../messages/scheduled-emails";
import type { FileStore } from "../files/file-store";
import { deleteParticipantFile } from "../participant-files/participant-files";
import { removeAccountRows } from "../participant-accounts/deletion/run-deletion";
import { CASE_UUID_PREFIX, caseAccountUuid, documentId, isObjectIdHex, type CaseDocument } from "./case-values";
import { IMPORT_ACTOR, type AbsentRows, type ImportedEntry } from "./import-batch";

/**
 * What an earlier import of a collection brought in and a newer dump no longer has.
 *
 * A deployment moving over imports a rehearsal dump first and the final dump into the same database
 * later. What happened in CASE between the two arrives as new and changed documents; what was
 * removed there (an account its owner deleted, a researcher or a grant taken away, an API key
 * revoked, a scheduled e-mail dropped, an e-mail sent) leaves no document behind. After a whole
 * pass over a collection's file, its importer's AbsentRows finds those rows: the run reports each,
 * and with `--prune` removes it as studyflow removes such a row itself.
 */

/** The entries of case_import_records of one kind (with a source id prefix: one study's). */
function recordedEntries(kind: string, sourcePrefix?: string) {
  return (db: Executor): Promise<ImportedEntry[]> =>
    db
      .select({ sourceId: caseImportRecords.sourceId, targetId: caseImportRecords.targetId })
      .from(caseImportRecords)
      .where(
        and(
          eq(caseImportRecords.kind, kind),
          sourcePrefix === undefined ? undefined : like(caseImportRecords.sourceId, `${escapeLike(sourcePrefix)}%`),
        ),
      );
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

async function forgetRecord(db: Executor, kind: string, sourceId: string) {
  await db
    .delete(caseImportRecords)
    .where(and(eq(caseImportRecords.kind, kind), eq(caseImportRecords.sourceId, sourceId)));
}

/** The audit entry of a row the import removes where no studyflow function would audit it. */
async function pruneAudited(tx: Executor, kind: string, targetId: string, details: Record<string, unknown>) {
  await recordAudit(tx, {
    studyKey: typeof details["studyKey"] === "string" ? details["studyKey"] : null,
    actor: IMPORT_ACTOR,
    action: "case-import.prune",
    target: targetId,
    details: { kind, ...details },
  });
}

/**
 * A kind kept in case_import_records: its row goes (in a transaction of its own, through studyflow's
 * function for it where there is one), then its record. A row gone already is fine: a run killed
 * between the two finds the record again and only forgets it.
 */
function recorded(
  kind: string,
  noun: string,
  removeTarget: (db: Database, targetId: string, ctx: ClockContext) => Promise<unknown>,
  sourcePrefix?: string,
): AbsentRows {
  return {
    noun,
    sourceIdOf: (document) => (sourcePrefix ?? "") + documentId(document),
    imported: recordedEntries(kind, sourcePrefix),
    remove: async (db, entry, ctx) => {
      try {
        await removeTarget(db, entry.targetId, ctx);
      } catch (error) {
        if (!(error instanceof NotFound)) throw error;
      }
      await forgetRecord(db, kind, entry.sourceId);
    },
  };
}

const now = (ctx: ClockContext) => new Date(ctx.clock());

/**
 * A participant account deleted in CASE. CASE ran the LEAVE rules and marked its participants
 * `accountDeleted` (the participants' documents bring that), and removed its confidential responses
 * and confidential-id map entries: those are removed here through the map, which CASE's own ids fill
 * (no study secret needed). Then the account goes as a finished deletion removes it, without the
 * confirmation mail CASE sent already.
 */
export const absentAccounts: AbsentRows = {
  noun: "account",
  sourceIdOf: documentId,
  imported: recordedEntries("user"),
  remove: async (db, entry, ctx) => {
    await db.transaction(async (tx) => {
      const owned = await tx.select({ id: profiles.id }).from(profiles).where(eq(profiles.userId, entry.targetId));
      const profileIds = owned.map((profile) => profile.id);
      let confidential = 0;
      if (profileIds.length > 0) {
        const mapped = await tx
          .select({ studyKey: confidentialIdMap.studyKey, confidentialId: confidentialIdMap.confidentialId })
          .from(confidentialIdMap)
          .where(inArray(confidentialIdMap.profileId, profileIds));
        for (const { studyKey, confidentialId } of mapped) {
          const removed = await tx
            .delete(confidentialResponses)
            .where(
              and(
                eq(confidentialResponses.studyKey, studyKey),
                eq(confidentialResponses.confidentialId, confidentialId),
              ),
            )
            .returning({ id: confidentialResponses.id });
          confidential += removed.length;
        }
      }
      const account = await removeAccountRows(tx, entry.targetId, profileIds);
      if (account) {
        await recordAudit(
          tx,
          {
            studyKey: null,
            actor: IMPORT_ACTOR,
            action: "participant-user.delete",
            target: entry.targetId,
            details: { reason: "absent from the CASE dump", profiles: profileIds.length, confidential },
          },
          now(ctx),
        );
      }
      await forgetRecord(tx, "user", entry.sourceId);
    });
  },
};

export const absentManagementUsers = recorded("management-user", "researcher", (db, id, ctx) =>
  removeManagementUser(db, id, IMPORT_ACTOR, now(ctx)),
);

export const absentServiceAccounts = recorded("service-account", "service account", (db, id, ctx) =>
  deleteServiceAccount(db, id, IMPORT_ACTOR, now(ctx)),
);

export const absentPermissions = recorded("permission", "permission", async (db, id, ctx) => {
  const [grant] = await db
    .select({ subjectType: permissions.subjectType, subjectId: permissions.subjectId })
    .from(permissions)
    .where(eq(permissions.id, Number(id)));
  if (grant) await deleteSubjectPermission(db, grant, id, IMPORT_ACTOR, now(ctx));
});

export const absentAppRoles = recorded("app-role", "app role", (db, id) =>
  db.transaction(async (tx) => {
    const [removed] = await tx.delete(appRoles).where(eq(appRoles.id, id)).returning();
    if (!removed) return;
    await pruneAudited(tx, "app-role", id, {
      subjectId: removed.subjectId,
      appName: removed.appName,
      role: removed.role,
    });
    forgetCached(tx, "grants", removed.subjectId);
  }),
);

export const absentAppRoleTemplates = recorded("app-role-template", "app role template", (db, id) =>
  db.transaction(async (tx) => {
    const [removed] = await tx.delete(appRoleTemplates).where(eq(appRoleTemplates.id, id)).returning();
    if (removed) await pruneAudited(tx, "app-role-template", id, { appName: removed.appName, role: removed.role });
  }),
);

export const absentEmailTemplates = recorded("email-template", "e-mail template", async (db, id) => {
  const [template] = await db
    .select({ studyKey: emailTemplates.studyKey, messageType: emailTemplates.messageType })
    .from(emailTemplates)
    .where(eq(emailTemplates.id, id));
  if (template) await deleteEmailTemplate(db, template.studyKey, template.messageType, IMPORT_ACTOR);
});

export const absentSmsTemplates = recorded("sms-template", "SMS template", (db, id) =>
  db.transaction(async (tx) => {
    const [removed] = await tx.delete(smsTemplates).where(eq(smsTemplates.id, id)).returning();
    if (removed) await pruneAudited(tx, "sms-template", id, { messageType: removed.messageType });
  }),
);

export const absentScheduledEmails = recorded("scheduled-email", "scheduled e-mail", (db, id) =>
  deleteScheduledEmail(db, id, IMPORT_ACTOR),
);

/** An e-mail CASE sent (or dropped) since: its outbox rows go while none has gone out. */
export const absentOutgoingEmails = recorded("outgoing-email", "waiting e-mail", (db, ids) =>
  db.transaction(async (tx) => {
    const targets = ids.split(",").filter((id) => id !== "");
    if (targets.length === 0) return;
    const removed = await tx
      .delete(outgoingMessages)
      .where(and(inArray(outgoingMessages.id, targets), eq(outgoingMessages.status, "pending")))
      .returning({ id: outgoingMessages.id });
    if (removed.length > 0) await pruneAudited(tx, "outgoing-email", ids, { removed: removed.length });
  }),
);

/** A study's messages to its researchers that CASE sent meanwhile (its job deletes what it sent): not sent twice. */
export const absentResearcherMessages = (studyKey: string) =>
  recorded(
    "researcher-message",
    "researcher message",
    (db, id) =>
      db.transaction(async (tx) => {
        const [removed] = await tx
          .delete(researcherMessages)
          .where(eq(researcherMessages.id, Number(id)))
          .returning({ id: researcherMessages.id });
        if (removed) await pruneAudited(tx, "researcher-message", id, { studyKey });
      }),
    `${studyKey}/`,
  );

/**
 * A service account's API key CASE no longer has (revoked): keys carry no record; the import's
 * keys are those it created, found by their hash.
 */
export const absentApiKeys: AbsentRows = {
  noun: "API key",
  sourceIdOf: (document) => {
    const key = document["key"];
    return typeof key === "string" ? hashApiKey(key) : undefined;
  },
  imported: async (db) =>
    (
      await db
        .select({ id: apiKeys.id, keyHash: apiKeys.keyHash })
        .from(apiKeys)
        .where(eq(apiKeys.createdBy, IMPORT_ACTOR))
    ).map((key) => ({ sourceId: key.keyHash, targetId: key.id })),
  remove: async (db, entry) => {
    await db.transaction(async (tx) => {
      const [removed] = await tx.delete(apiKeys).where(eq(apiKeys.id, entry.targetId)).returning();
      if (!removed) return;
      await pruneAudited(tx, "api-key", entry.targetId, {
        serviceAccountId: removed.serviceAccountId,
        keyPrefix: removed.keyPrefix,
      });
      forgetCached(tx, "api-key", removed.keyHash);
    });
  },
};

/** Rows of a study's collection whose ids came from CASE's ObjectIds (caseAccountUuid), by id. */
function objectIdEntries(table: typeof confidentialResponses | typeof participantFiles, studyKey: string) {
  return async (db: Executor): Promise<ImportedEntry[]> =>
    (
      await db
        .select({ id: table.id })
        .from(table)
        .where(and(eq(table.studyKey, studyKey), like(sql`${table.id}::text`, `${CASE_UUID_PREFIX}%`)))
    ).map((row) => ({ sourceId: row.id, targetId: row.id }));
}

/** The id a document with an ObjectId _id is kept under (caseAccountUuid), as its source id. */
const objectIdRow = (document: CaseDocument) => {
  const id = documentId(document);
  return isObjectIdHex(id) ? caseAccountUuid(id) : undefined;
};

/** A confidential response CASE removed (a rule's REMOVE_CONFIDENTIAL_RESPONSE…, a participant who left). */
export const absentConfidentialResponses = (studyKey: string): AbsentRows => ({
  noun: "confidential response",
  sourceIdOf: objectIdRow,
  imported: objectIdEntries(confidentialResponses, studyKey),
  remove: async (db, entry) => {
    await db.transaction(async (tx) => {
      const [removed] = await tx
        .delete(confidentialResponses)
        .where(eq(confidentialResponses.id, entry.targetId))
        .returning({ key: confidentialResponses.key });
      if (removed) await pruneAudited(tx, "confidential-response", entry.targetId, { studyKey, key: removed.key });
    });
  },
});

/** A participant's file CASE deleted: its record and bytes go as a researcher's deletion removes them. */
export const absentParticipantFiles = (studyKey: string, store: FileStore | undefined): AbsentRows => ({
  noun: "participant file",
  sourceIdOf: objectIdRow,
  imported: objectIdEntries(participantFiles, studyKey),
  ...(store
    ? {
        remove: async (db: Database, entry: ImportedEntry) => {
          try {
            await deleteParticipantFile(db, store, studyKey, entry.targetId);
          } catch (error) {
            if (!(error instanceof NotFound)) throw error;
          }
        },
      }
    : {
        advice: (entry: ImportedEntry) =>
          `not in this dump: participant file ${entry.targetId}, which an earlier import brought in (deleted in CASE ` +
          "since?); --prune removes it when the run has the file store (--files-dir)",
      }),
});

/**
 * A code CASE drew or removed from a study's list: left in studyflow, it could be handed out a
 * second time. The studies are those this run imported (a study's codes are CASE's until the switch).
 */
export const absentStudyCodes = (studies: { readonly keys: ReadonlySet<string> }): AbsentRows => ({
  noun: "study code",
  sourceIdOf: (document) =>
    codeKey(String(document["studyKey"]), String(document["listKey"]), String(document["code"])),
  imported: async (db) =>
    studies.keys.size === 0
      ? []
      : (
          await db
            .select({
              id: studyCodeLists.id,
              studyKey: studyCodeLists.studyKey,
              listKey: studyCodeLists.listKey,
              code: studyCodeLists.code,
            })
            .from(studyCodeLists)
            .where(inArray(studyCodeLists.studyKey, [...studies.keys]))
        ).map((row) => ({ sourceId: codeKey(row.studyKey, row.listKey, row.code), targetId: String(row.id) })),
  remove: async (db, entry) => {
    await db.transaction(async (tx) => {
      const [removed] = await tx
        .delete(studyCodeLists)
        .where(eq(studyCodeLists.id, Number(entry.targetId)))
        .returning({ studyKey: studyCodeLists.studyKey, listKey: studyCodeLists.listKey });
      // the code itself stays out of the audit log: it may be a voucher or a kit's number
      if (removed) await pruneAudited(tx, "study-code", entry.targetId, removed);
    });
  },
});

const codeKey = (studyKey: string, listKey: string, code: string) => JSON.stringify([studyKey, listKey, code]);

/** A study CASE no longer has: only reported; deleting a whole study is the operator's decision. */
export const absentStudies: AbsentRows = {
  noun: "study",
  sourceIdOf: (document) => {
    const key = document["key"];
    return typeof key === "string" ? key : undefined;
  },
  imported: recordedEntries("study"),
  advice: (entry) =>
    `not in this dump: study "${entry.targetId}", which an earlier import brought in, is no longer in CASE; ` +
    "delete it (DELETE /v1/studies/{studyKey}) if it should go",
};

/** The report's line for an absent row the run does not remove. */
export function absentReason(rows: AbsentRows, entry: ImportedEntry): string {
  return (
    rows.advice?.(entry) ??
    `not in this dump: a ${rows.noun} an earlier import brought in (removed in CASE since?); --prune removes it`
  );
}
