import { and, asc, eq } from "drizzle-orm";
import { messageTemplates, type Executor } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { recordAudit } from "../foundation/audit";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";
import { parseTemplate } from "./template-syntax";

/**
 * Message templates: per study, message type and language, the subject and body of the e-mail a
 * participant message becomes (scheduled ADD_MESSAGE messages when due, SEND_MESSAGE_NOW at
 * once). Checked when uploaded, so sending never meets a broken template.
 */

export type MessageTemplate = typeof messageTemplates.$inferSelect;

/** A subject is one line in a mail client's list; longer ones are cut off there anyway. */
export const MAX_TEMPLATE_SUBJECT_LENGTH = 200;
/** A message, not a newsletter: a long body is more likely a wrong file than an intended mail. */
export const MAX_TEMPLATE_BODY_LENGTH = 20_000;

/** The language a study's mails fall back to before any other: the reference platform's default. */
export const DEFAULT_TEMPLATE_LANGUAGE = "en";

const MESSAGE_TYPE = /^[^\s/?#]{1,200}$/;
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** A message type as rules name it, usable in a URL path (no spaces, '/', '?' or '#'). */
export function checkMessageType(messageType: string, field = "messageType"): string {
  if (!MESSAGE_TYPE.test(messageType)) {
    throw new Invalid(`${field}: must be 1 to 200 characters without spaces, '/', '?' or '#'`);
  }
  return messageType;
}

/**
 * A language tag in its canonical case ("de-ch" → "de-CH"), so one language has one template.
 *
 * @throws Invalid naming `field` for anything but a plain tag such as en or de-CH.
 */
export function canonicalLanguage(language: string, field = "language"): string {
  const refuse = () => new Invalid(`${field}: must be a language tag such as en or de-CH, got "${language}"`);
  if (!LANGUAGE_TAG.test(language)) throw refuse();
  try {
    const [canonical] = Intl.getCanonicalLocales(language);
    if (canonical === undefined) throw refuse();
    return canonical;
  } catch {
    throw refuse();
  }
}

export interface MessageTemplateText {
  subject: string;
  body: string;
}

/** Checks a subject and body as the upload takes them; Invalid names the field and the place. */
export function checkMessageTemplateText(input: MessageTemplateText): MessageTemplateText {
  if (input.subject.trim() === "") throw new Invalid("subject: must not be empty");
  if (input.subject.length > MAX_TEMPLATE_SUBJECT_LENGTH) {
    throw new Invalid(`subject: is longer than ${MAX_TEMPLATE_SUBJECT_LENGTH} characters`);
  }
  // Header values must stay on one line; a control character could break or forge headers.
  if (/[\p{Cc}\p{Cf}]/u.test(input.subject)) throw new Invalid("subject: must be one line without control characters");
  if (input.body.trim() === "") throw new Invalid("body: must not be empty");
  if (input.body.length > MAX_TEMPLATE_BODY_LENGTH) {
    throw new Invalid(`body: is longer than ${MAX_TEMPLATE_BODY_LENGTH} characters`);
  }
  parseTemplate(input.subject, "subject");
  parseTemplate(input.body, "body");
  return { subject: input.subject, body: input.body };
}

const templateOf = (studyKey: string, messageType: string, language: string) =>
  and(
    eq(messageTemplates.studyKey, studyKey),
    eq(messageTemplates.messageType, messageType),
    eq(messageTemplates.language, language),
  );

/** By message type, then language. */
export async function listMessageTemplates(db: Executor, studyKey: string): Promise<MessageTemplate[]> {
  await getStudy(db, studyKey);
  return db
    .select()
    .from(messageTemplates)
    .where(eq(messageTemplates.studyKey, studyKey))
    .orderBy(asc(messageTemplates.messageType), asc(messageTemplates.language));
}

export interface MessageTemplateKey {
  studyKey: string;
  messageType: string;
  language: string;
}

function checkedKey(key: MessageTemplateKey): MessageTemplateKey {
  return {
    studyKey: key.studyKey,
    messageType: checkMessageType(key.messageType),
    language: canonicalLanguage(key.language),
  };
}

function notFound(key: MessageTemplateKey): NotFound {
  return new NotFound(
    `message template "${key.messageType}" in language "${key.language}" not found in study "${key.studyKey}"`,
  );
}

export async function readMessageTemplate(db: Executor, key: MessageTemplateKey): Promise<MessageTemplate> {
  const { studyKey, messageType, language } = checkedKey(key);
  await getStudy(db, studyKey);
  const [row] = await db
    .select()
    .from(messageTemplates)
    .where(templateOf(studyKey, messageType, language))
    .limit(1);
  if (!row) throw notFound({ studyKey, messageType, language });
  return row;
}

/**
 * Stores a template (new or replacing the one of its type and language), checked first, and
 * records `message-template.set` with the text before, in one transaction.
 */
export async function setMessageTemplate(
  db: Executor,
  input: MessageTemplateKey & MessageTemplateText,
  actor: string,
  ctx: ClockContext,
): Promise<{ template: MessageTemplate; created: boolean }> {
  const { studyKey, messageType, language } = checkedKey(input);
  const text = checkMessageTemplateText(input);
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [previous] = await tx
      .select()
      .from(messageTemplates)
      .where(templateOf(studyKey, messageType, language))
      .for("update")
      .limit(1);
    // A concurrent first upload of the same template is an update of it, not a failure.
    const [template] = await tx
      .insert(messageTemplates)
      .values({ studyKey, messageType, language, ...text, updatedBy: actor, updatedAt: new Date(ctx.clock()) })
      .onConflictDoUpdate({
        target: [messageTemplates.studyKey, messageTemplates.messageType, messageTemplates.language],
        set: { ...text, updatedBy: actor, updatedAt: new Date(ctx.clock()) },
      })
      .returning();
    if (!template) throw new Error("message template upsert returned nothing");
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "message-template.set",
      target: `${messageType}/${language}`,
      details: {
        messageType,
        language,
        ...text,
        ...(previous ? { previous: { subject: previous.subject, body: previous.body } } : {}),
      },
    });
    return { template, created: previous === undefined };
  });
}

/** Deletes a template, recording `message-template.delete` with its last text; NotFound if absent. */
export async function deleteMessageTemplate(db: Executor, key: MessageTemplateKey, actor: string): Promise<void> {
  const { studyKey, messageType, language } = checkedKey(key);
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [removed] = await tx
      .delete(messageTemplates)
      .where(templateOf(studyKey, messageType, language))
      .returning();
    if (!removed) throw notFound({ studyKey, messageType, language });
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "message-template.delete",
      target: `${messageType}/${language}`,
      details: { messageType, language, subject: removed.subject, body: removed.body },
    });
  });
}

/** The templates of one message type, in every language the study has it in. */
export async function templatesOfType(db: Executor, studyKey: string, messageType: string): Promise<MessageTemplate[]> {
  return db
    .select()
    .from(messageTemplates)
    .where(and(eq(messageTemplates.studyKey, studyKey), eq(messageTemplates.messageType, messageType)))
    .orderBy(asc(messageTemplates.language));
}

const primaryOf = (language: string) => language.toLowerCase().split(/[-_]/)[0] ?? "";

/**
 * The template a recipient reads: the first of `preferred` (a SEND_MESSAGE_NOW language
 * override, then the account's language) that the study has a template in, matched exactly
 * ("de-CH") or by its primary language ("de-CH" reads "de", "de" reads "de-CH" when that is the
 * only German one); else English; else the study's first language in alphabetical order.
 * Undefined only when there is no template at all.
 */
export function chooseTemplate<T extends { language: string }>(
  templates: readonly T[],
  preferred: readonly (string | null | undefined)[],
): T | undefined {
  const sorted = [...templates].sort((a, b) => a.language.localeCompare(b.language));
  for (const wanted of [...preferred, DEFAULT_TEMPLATE_LANGUAGE]) {
    if (!wanted) continue;
    const exact = sorted.find((t) => t.language.toLowerCase() === wanted.toLowerCase());
    if (exact) return exact;
    const sameLanguage = sorted.find((t) => primaryOf(t.language) === primaryOf(wanted));
    if (sameLanguage) return sameLanguage;
  }
  return sorted[0];
}
