import { createHash } from "node:crypto";
import { and, eq, inArray, isNull, ne } from "drizzle-orm";
import {
  caseImportRecords,
  emailTemplates,
  outgoingMessages,
  scheduledEmails,
  SCHEDULED_EMAIL_TYPES,
  smsTemplates,
  studies,
  type EmailHeaderOverrides,
  type EmailTemplateTranslation,
  type Executor,
  type ScheduledEmailType,
} from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { SCHEDULED_EMAIL_TEMPLATE } from "../messages/scheduled-emails";
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
import { absentEmailTemplates, absentOutgoingEmails, absentScheduledEmails, absentSmsTemplates } from "./import-absent";
import {
  IMPORT_ACTOR,
  INSERTED,
  skipped,
  UNCHANGED,
  UPDATED,
  type CollectionImporter,
  type DocumentOutcome,
} from "./import-batch";
import { findDumpCollection } from "./dump-reader";
import type { ImportCollection } from "./import-management";
import { importedTarget, importRecordedRow } from "./import-record";

/**
 * The messaging side of a CASE instance (`<prefix><instance>_messageDB`, case-backend's
 * pkg/messaging/types): e-mail and SMS templates, scheduled e-mails and e-mails still waiting to
 * go out. What was sent (`sent-emails`, `sent-sms`) is history and stays behind.
 */

/** EmailTemplate.headerOverrides: null stays null. */
function headerOverridesOf(value: unknown): EmailHeaderOverrides | null {
  if (value === null || value === undefined) return null;
  const header = asRecord(value);
  return {
    from: asString(header["from"]),
    sender: asString(header["sender"]),
    replyTo: asArray(header["replyTo"]).map(asString),
    noReplyTo: header["noReplyTo"] === true,
  };
}

/** LocalizedTemplate: stored as `languageCode`, answered as `lang`. */
const translationsOf = (value: unknown): EmailTemplateTranslation[] =>
  asArray(value).map((entry) => {
    const translation = asRecord(entry);
    return {
      lang: asString(translation["languageCode"]),
      subject: asString(translation["subject"]),
      templateDef: asString(translation["templateDef"]),
    };
  });

async function studyExists(tx: Executor, key: string) {
  return (await tx.select({ key: studies.key }).from(studies).where(eq(studies.key, key))).length > 0;
}

/** A UUID from an e-mail's CASE id and the place of one of its recipients. */
function outboxRowId(sourceId: string, index: number): string {
  const hex = createHash("sha256").update(`${sourceId}/${index}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const idFor = (sourceId: string) => (isObjectIdHex(sourceId) ? { id: caseAccountUuid(sourceId) } : {});

/** `email-templates`: global ones (no studyKey) and a study's, one per message type and study. */
export function emailTemplatesImporter(replace: boolean, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentEmailTemplates,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const messageType = asString(document["messageType"]);
        const studyKey = asString(document["studyKey"]) || null;
        if (messageType === "") {
          outcomes.push(skipped("the template has no messageType"));
          continue;
        }
        if (studyKey !== null && !(await studyExists(tx, studyKey))) {
          outcomes.push(skipped(`study "${studyKey}" is not in studyflow (import its study first)`));
          continue;
        }
        const sourceId = documentId(document);
        const fields = {
          studyKey,
          messageType,
          defaultLanguage: asString(document["defaultLanguage"]),
          headerOverrides: headerOverridesOf(document["headerOverrides"]),
          translations: translationsOf(document["translations"]),
          updatedBy: IMPORT_ACTOR,
          updatedAt: new Date(ctx.clock()),
        };
        const sameType = and(
          eq(emailTemplates.messageType, messageType),
          studyKey === null ? isNull(emailTemplates.studyKey) : eq(emailTemplates.studyKey, studyKey),
        );
        outcomes.push(
          await importRecordedRow(
            tx,
            {
              kind: "email-template",
              sourceId,
              label: `a ${studyKey === null ? "global" : `study ${studyKey}`} e-mail template "${messageType}"`,
              findNatural: async (db) =>
                (await db.select({ id: emailTemplates.id }).from(emailTemplates).where(sameType))[0]?.id,
              exists: async (db, id) =>
                (await db.select({ id: emailTemplates.id }).from(emailTemplates).where(eq(emailTemplates.id, id)))
                  .length > 0,
              insert: async (db) => {
                const [row] = await db
                  .insert(emailTemplates)
                  .values({ ...idFor(sourceId), ...fields })
                  .returning({ id: emailTemplates.id });
                return row!.id;
              },
              update: async (db, id) => {
                await db.update(emailTemplates).set(fields).where(eq(emailTemplates.id, id));
              },
            },
            bytes,
            write,
            replace,
            ctx,
          ),
        );
      }
      return outcomes;
    },
  };
}

/** `sms-templates`: one per message type (kept for case-admin; studyflow sends no SMS). */
export function smsTemplatesImporter(replace: boolean, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentSmsTemplates,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const messageType = asString(document["messageType"]);
        if (messageType === "") {
          outcomes.push(skipped("the template has no messageType"));
          continue;
        }
        const sourceId = documentId(document);
        const fields = {
          messageType,
          defaultLanguage: asString(document["defaultLanguage"]),
          fromName: asString(document["from"]),
          translations: translationsOf(document["translations"]).map(({ lang, templateDef }) => ({
            lang,
            templateDef,
          })),
          updatedBy: IMPORT_ACTOR,
          updatedAt: new Date(ctx.clock()),
        };
        outcomes.push(
          await importRecordedRow(
            tx,
            {
              kind: "sms-template",
              sourceId,
              label: `an SMS template "${messageType}"`,
              findNatural: async (db) =>
                (
                  await db
                    .select({ id: smsTemplates.id })
                    .from(smsTemplates)
                    .where(eq(smsTemplates.messageType, messageType))
                )[0]?.id,
              exists: async (db, id) =>
                (await db.select({ id: smsTemplates.id }).from(smsTemplates).where(eq(smsTemplates.id, id))).length > 0,
              insert: async (db) => {
                const [row] = await db
                  .insert(smsTemplates)
                  .values({ ...idFor(sourceId), ...fields })
                  .returning({ id: smsTemplates.id });
                return row!.id;
              },
              update: async (db, id) => {
                await db.update(smsTemplates).set(fields).where(eq(smsTemplates.id, id));
              },
            },
            bytes,
            write,
            replace,
            ctx,
          ),
        );
      }
      return outcomes;
    },
  };
}

const isScheduledType = (value: string): value is ScheduledEmailType =>
  (SCHEDULED_EMAIL_TYPES as readonly string[]).includes(value);

/** `auto-messages`: scheduled e-mails, with their next time, period and end as case-backend has them. */
export function scheduledEmailsImporter(replace: boolean, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentScheduledEmails,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const plan = await planSchedule(tx, document);
        if (typeof plan === "string") {
          outcomes.push(skipped(plan));
          continue;
        }
        const sourceId = documentId(document);
        const id = caseAccountUuid(sourceId);
        outcomes.push(
          await importRecordedRow(
            tx,
            {
              kind: "scheduled-email",
              sourceId,
              label: `a scheduled e-mail ${id}`,
              findNatural: async (db) =>
                (await db.select({ id: scheduledEmails.id }).from(scheduledEmails).where(eq(scheduledEmails.id, id)))[0]
                  ?.id,
              exists: async (db, target) =>
                (
                  await db
                    .select({ id: scheduledEmails.id })
                    .from(scheduledEmails)
                    .where(eq(scheduledEmails.id, target))
                ).length > 0,
              insert: async (db) => {
                await db.insert(scheduledEmails).values({ id, ...plan, updatedAt: new Date(ctx.clock()) });
                return id;
              },
              update: async (db, target) => {
                await db
                  .update(scheduledEmails)
                  .set({ ...plan, updatedAt: new Date(ctx.clock()) })
                  .where(eq(scheduledEmails.id, target));
              },
            },
            bytes,
            write,
            replace,
            ctx,
          ),
        );
      }
      return outcomes;
    },
  };
}

async function planSchedule(tx: Executor, document: CaseDocument) {
  if (!isObjectIdHex(documentId(document))) return "the schedule's _id is not an ObjectId";
  const type = asString(document["type"]);
  if (!isScheduledType(type)) return `schedule type "${type}" is not one studyflow sends`;
  const studyKey = type === "study-participants" ? asString(document["studyKey"]) : "";
  if (type === "study-participants" && !(studyKey !== "" && (await studyExists(tx, studyKey)))) {
    return `study "${studyKey}" is not in studyflow (import its study first)`;
  }
  const condition = toPlain(document["condition"]);
  if (condition !== null && typeof condition === "object" && Object.keys(condition).length > 0) {
    return "participant conditions on scheduled e-mails are not evaluated by studyflow; recreate the schedule without one";
  }
  const period = asNumber(document["period"]);
  if (period <= 0) return "period is not a positive number of seconds";
  const template = asRecord(document["template"]);
  const messageType = asString(template["messageType"]);
  if (messageType === "") return "the schedule's template has no messageType";
  return {
    type,
    studyKey: studyKey === "" ? null : studyKey,
    label: asString(document["label"]),
    template: {
      messageType,
      defaultLanguage: asString(template["defaultLanguage"]),
      headerOverrides: headerOverridesOf(template["headerOverrides"]),
      translations: translationsOf(template["translations"]),
    },
    condition: null,
    nextTime: asNumber(document["nextTime"]),
    period,
    until: Math.max(0, asNumber(document["until"])),
    createdBy: IMPORT_ACTOR,
  };
}

/**
 * `outgoing-emails`: e-mails case-backend had rendered and not yet sent, one outbox row per
 * address, sent as rendered (the outbox's scheduled-e-mail rows carry subject and HTML the same
 * way). A changed document replaces its rows while none has gone out.
 */
export function outgoingEmailsImporter(ctx: ClockContext): CollectionImporter {
  return {
    absent: absentOutgoingEmails,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const sourceId = documentId(document);
        const to = asArray(document["to"])
          .map(asString)
          .filter((address) => address.includes("@"));
        const content = asString(document["content"]);
        if (to.length === 0) {
          outcomes.push(skipped("the e-mail has no recipient address"));
          continue;
        }
        if (content.trim() === "") {
          outcomes.push(skipped("the e-mail has no content"));
          continue;
        }
        const hash = contentHash(bytes);
        const [record] = await tx
          .select()
          .from(caseImportRecords)
          .where(and(eq(caseImportRecords.kind, "outgoing-email"), eq(caseImportRecords.sourceId, sourceId)));
        if (record && record.contentHash === hash) {
          outcomes.push(UNCHANGED);
          continue;
        }
        const previous = record ? record.targetId.split(",").filter((id) => id !== "") : [];
        if (previous.length > 0) {
          const gone = await tx
            .select({ id: outgoingMessages.id })
            .from(outgoingMessages)
            .where(and(inArray(outgoingMessages.id, previous), ne(outgoingMessages.status, "pending")));
          if (gone.length > 0) {
            outcomes.push(skipped("studyflow has already sent (or tried to send) this e-mail; it is not queued again"));
            continue;
          }
        }
        const caseUserId = asString(document["userId"]);
        const userId = isObjectIdHex(caseUserId) ? await importedTarget(tx, "user", caseUserId) : undefined;
        const addedAt = unixSecondsDate(document["addedAt"]) ?? new Date(ctx.clock());
        const messageType = asString(document["messageType"]);
        if (write) {
          if (previous.length > 0) await tx.delete(outgoingMessages).where(inArray(outgoingMessages.id, previous));
          const rows = await tx
            .insert(outgoingMessages)
            .values(
              to.map((address, index) => ({
                // from CASE's id and the recipient's place, so that every import of the same dump gives the same rows
                id: outboxRowId(sourceId, index),
                template: SCHEDULED_EMAIL_TEMPLATE,
                toAddress: address,
                userId: userId ?? null,
                payload: {
                  messageType,
                  subject: asString(document["subject"]),
                  html: content,
                  headerOverrides: toPlain(document["headerOverrides"]),
                  caseMessageId: sourceId,
                },
                availableAt: addedAt,
                expiresAt: unixSecondsDate(document["expiresAt"]),
                createdAt: addedAt,
              })),
            )
            .returning({ id: outgoingMessages.id });
          const values = {
            targetId: rows.map((row) => row.id).join(","),
            contentHash: hash,
            kept: {},
            importedAt: new Date(ctx.clock()),
          };
          await tx
            .insert(caseImportRecords)
            .values({ kind: "outgoing-email", sourceId, ...values })
            .onConflictDoUpdate({ target: [caseImportRecords.kind, caseImportRecords.sourceId], set: values });
        }
        outcomes.push(record ? UPDATED : INSERTED);
      }
      return outcomes;
    },
  };
}

/**
 * The collections of `<prefix><instance>_messageDB`, each when the dump has it; after studies
 * (a study's templates and schedules) and accounts (the account of a waiting e-mail).
 */
export async function importMessageCollections(
  dumpDir: string,
  database: string,
  replace: boolean,
  ctx: ClockContext,
  importCollection: ImportCollection,
) {
  const steps: [string, CollectionImporter][] = [
    ["email-templates", emailTemplatesImporter(replace, ctx)],
    ["sms-templates", smsTemplatesImporter(replace, ctx)],
    ["auto-messages", scheduledEmailsImporter(replace, ctx)],
    ["outgoing-emails", outgoingEmailsImporter(ctx)],
  ];
  for (const [collection, importer] of steps) {
    const file = await findDumpCollection(dumpDir, database, collection);
    if (file) await importCollection(file, importer);
  }
}
