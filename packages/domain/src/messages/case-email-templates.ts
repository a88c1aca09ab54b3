import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import {
  emailTemplates,
  studies,
  type EmailHeaderOverrides,
  type EmailTemplateTranslation,
  type Executor,
} from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { recordAudit } from "../foundation/audit";
import { Conflict, Invalid, NotFound } from "../errors";
import { goTemplateProblem } from "@studyflow/go-template";

/**
 * case-admin's e-mail templates (case-backend's messaging service): global ones (registration,
 * password reset, newsletters…; no study) and per-study ones, one per message type and study.
 * Each language's `templateDef` is base64 of a Go html/template, stored and answered as given,
 * checked on save as case-backend checks it (see @studyflow/go-template for the subset read).
 */
export interface CaseEmailTemplate {
  id: string;
  messageType: string;
  /** "" for a global template, as case-backend answers it. */
  studyKey: string;
  defaultLanguage: string;
  headerOverrides: EmailHeaderOverrides | null;
  translations: EmailTemplateTranslation[];
}

/** A template as case-admin sends it: `id` empty or absent for a new one. */
export interface CaseEmailTemplateInput {
  id?: string | undefined;
  messageType: string;
  defaultLanguage?: string | undefined;
  headerOverrides?: HeaderOverridesInput | null | undefined;
  translations?: readonly { lang: string; subject?: string | undefined; templateDef: string }[] | null | undefined;
}

/** Header overrides as sent: any field may be missing (Go's zero value), `replyTo` null. */
export interface HeaderOverridesInput {
  from?: string | undefined;
  sender?: string | undefined;
  replyTo?: readonly string[] | null | undefined;
  noReplyTo?: boolean | undefined;
}

/** Header overrides as case-backend keeps and answers them: every field, zero values filled in. */
export function storedHeaderOverrides(input: HeaderOverridesInput | null | undefined): EmailHeaderOverrides | null {
  if (!input) return null;
  return {
    from: input.from ?? "",
    sender: input.sender ?? "",
    replyTo: [...(input.replyTo ?? [])],
    noReplyTo: input.noReplyTo ?? false,
  };
}

/** A language of a template to check: e-mail (with subject) or SMS. */
interface TranslationToCheck {
  lang: string;
  templateDef: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` can name a stored row (ids are uuids; anything else names none). */
export function isStoredId(id: string): boolean {
  return UUID.test(id);
}

/** Go's url.QueryEscape: everything but letters, digits and `-_.~` percent-encoded, a space as `+`. */
export function goQueryEscape(text: string): string {
  return Array.from(new TextEncoder().encode(text), (byte) => {
    const char = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(char)) return char;
    if (char === " ") return "+";
    return `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }).join("");
}

/**
 * case-backend's SanitizeMessageType: trimmed, quotes and line breaks removed, URL-escaped (a
 * message type is a path segment of case-admin's pages and of the routes). 400 when nothing is left.
 */
export function sanitizeMessageType(messageType: string): string {
  const cleaned = messageType.trim().replace(/["'\r\n]/g, "");
  if (cleaned === "") throw new Invalid("messageType: must not be empty");
  if (cleaned.length > 200) throw new Invalid("messageType: longer than 200 characters");
  return goQueryEscape(cleaned);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The text of a base64 `templateDef` (Go's StdEncoding: padded; line breaks ignored), or null. */
export function decodeTemplateDef(templateDef: string): string | null {
  const compact = templateDef.replace(/[\r\n]/g, "");
  if (!BASE64.test(compact)) return null;
  return Buffer.from(compact, "base64").toString("utf8");
}

/** Most languages a template may have, and the largest templateDef (base64) studyflow keeps. */
export const MAX_TEMPLATE_TRANSLATIONS = 50;
export const MAX_TEMPLATE_DEF_LENGTH = 512 * 1024;

/**
 * case-backend's CheckAllTranslationsParsable: at least one language; each `templateDef` base64
 * of a template that parses and runs with an empty map. 400 naming the field and the problem.
 */
export function checkTemplateTranslations(
  translations: readonly TranslationToCheck[] | null | undefined,
  field = "translations",
): void {
  if (!translations || translations.length === 0) {
    throw new Invalid(`${field}: error while checking template validity: translation list is empty`);
  }
  if (translations.length > MAX_TEMPLATE_TRANSLATIONS) {
    throw new Invalid(`${field}: more than ${MAX_TEMPLATE_TRANSLATIONS} languages`);
  }
  translations.forEach((translation, index) => {
    const at = `${field}[${index}].templateDef`;
    if (translation.templateDef.length > MAX_TEMPLATE_DEF_LENGTH) {
      throw new Invalid(`${at}: longer than ${MAX_TEMPLATE_DEF_LENGTH} characters`);
    }
    const text = decodeTemplateDef(translation.templateDef);
    if (text === null) {
      throw new Invalid(`${at}: error while checking template validity: not base64 (lang "${translation.lang}")`);
    }
    const problem = goTemplateProblem(text);
    if (problem !== null) {
      throw new Invalid(`${at}: error while checking template validity (lang "${translation.lang}"): ${problem}`);
    }
  });
}

type EmailTemplateRow = typeof emailTemplates.$inferSelect;

export function presentEmailTemplate(row: EmailTemplateRow): CaseEmailTemplate {
  return {
    id: row.id,
    messageType: row.messageType,
    studyKey: row.studyKey ?? "",
    defaultLanguage: row.defaultLanguage,
    headerOverrides: row.headerOverrides ?? null,
    translations: row.translations,
  };
}

/** The stored form of a template's languages: lang, subject, templateDef as given. */
function storedTranslations(input: CaseEmailTemplateInput): EmailTemplateTranslation[] {
  return (input.translations ?? []).map((translation) => ({
    lang: translation.lang,
    subject: translation.subject ?? "",
    templateDef: translation.templateDef,
  }));
}

const scopeOf = (studyKey: string | null) =>
  studyKey === null ? isNull(emailTemplates.studyKey) : eq(emailTemplates.studyKey, studyKey);

/** Global templates (no study), by message type. */
export async function listGlobalEmailTemplates(db: Executor): Promise<CaseEmailTemplate[]> {
  const rows = await db
    .select()
    .from(emailTemplates)
    .where(isNull(emailTemplates.studyKey))
    .orderBy(asc(emailTemplates.messageType));
  return rows.map(presentEmailTemplate);
}

/** Every study's templates, by study and message type. */
export async function listStudyEmailTemplates(db: Executor, studyKey?: string): Promise<CaseEmailTemplate[]> {
  const rows = await db
    .select()
    .from(emailTemplates)
    .where(studyKey === undefined ? isNotNull(emailTemplates.studyKey) : eq(emailTemplates.studyKey, studyKey))
    .orderBy(asc(emailTemplates.studyKey), asc(emailTemplates.messageType));
  return rows.map(presentEmailTemplate);
}

/**
 * The translation of a template a recipient gets: theirs (exactly, as case-backend compares), else
 * the template's default, else its first (case-backend would send nothing there; the scheduled
 * e-mails take the first too). Undefined only for a template without translations.
 */
export function templateTranslationFor<T extends { lang: string }>(
  template: { defaultLanguage: string; translations: readonly T[] },
  language: string,
): T | undefined {
  return (
    template.translations.find((translation) => translation.lang === language) ??
    template.translations.find((translation) => translation.lang === template.defaultLanguage) ??
    template.translations[0]
  );
}

/**
 * How long the `loginToken` a CASE template's mail carries (a survey-login token for the study, as
 * case-backend's messaging jobs issue one, with the week its example configuration gives) stays
 * usable. It is only half a sign-in: login-with-temptoken also wants the account's password or a
 * valid access token.
 */
export const TEMPLATE_LOGIN_TOKEN_TTL_SECONDS = 7 * 86_400;

/**
 * Whether a template's source reads `.loginToken`: only then is a token issued for its mail,
 * rather than a row per recipient that no mail carries.
 */
export function readsLoginToken(source: string): boolean {
  return /\.loginToken\b/.test(source);
}

/** The template of a type in a scope (a study, or null: global), or null. */
export async function findEmailTemplate(
  db: Executor,
  studyKey: string | null,
  messageType: string,
): Promise<CaseEmailTemplate | null> {
  const [row] = await db
    .select()
    .from(emailTemplates)
    .where(and(scopeOf(studyKey), eq(emailTemplates.messageType, messageType)))
    .limit(1);
  return row ? presentEmailTemplate(row) : null;
}

/**
 * The global template of a type; case-backend answers a type without one with an empty template
 * (`{messageType, translations: []}`), which case-admin opens as a new one.
 */
export async function readGlobalEmailTemplate(db: Executor, messageType: string): Promise<CaseEmailTemplate> {
  return (
    (await findEmailTemplate(db, null, messageType)) ?? {
      id: "",
      messageType,
      studyKey: "",
      defaultLanguage: "",
      headerOverrides: null,
      translations: [],
    }
  );
}

/** A study's template of a type; 404 when it has none. */
export async function readStudyEmailTemplate(
  db: Executor,
  studyKey: string,
  messageType: string,
): Promise<CaseEmailTemplate> {
  const found = await findEmailTemplate(db, studyKey, messageType);
  if (!found) throw new NotFound(`e-mail template "${messageType}" not found in study "${studyKey}"`);
  return found;
}

/**
 * Saves a template in its scope (a study, or null: global), as case-backend does: without `id` a
 * new one (409 when the scope has one of that type already), with `id` a replacement of that one
 * (404 unless it exists in the same scope). The message type is sanitised and every language
 * checked first; audited `email-template.save` in the same transaction.
 */
export async function saveEmailTemplate(
  db: Executor,
  studyKey: string | null,
  input: CaseEmailTemplateInput,
  actor: string,
  ctx: ClockContext,
): Promise<CaseEmailTemplate> {
  const messageType = sanitizeMessageType(input.messageType);
  checkTemplateTranslations(input.translations);
  const values = {
    studyKey,
    messageType,
    defaultLanguage: input.defaultLanguage ?? "",
    headerOverrides: storedHeaderOverrides(input.headerOverrides),
    translations: storedTranslations(input),
    updatedBy: actor,
    updatedAt: new Date(ctx.clock()),
  };
  const id = input.id ?? "";
  return db.transaction(async (tx) => {
    if (studyKey !== null) {
      const [study] = await tx.select({ key: studies.key }).from(studies).where(eq(studies.key, studyKey)).limit(1);
      if (!study) throw new NotFound(`study "${studyKey}" not found`);
    }
    let row: EmailTemplateRow | undefined;
    let previous: EmailTemplateRow | undefined;
    if (id === "") {
      [row] = await tx.insert(emailTemplates).values(values).onConflictDoNothing().returning();
      if (!row) {
        throw new Conflict(
          `an e-mail template of type "${messageType}" exists already ${studyKey === null ? "among the global templates" : `in study "${studyKey}"`}; send its id to replace it`,
        );
      }
    } else {
      if (!isStoredId(id)) throw new NotFound(`e-mail template "${id}" not found`);
      [previous] = await tx
        .select()
        .from(emailTemplates)
        .where(and(eq(emailTemplates.id, id), scopeOf(studyKey)))
        .for("update")
        .limit(1);
      if (!previous) throw new NotFound(`e-mail template "${id}" not found`);
      const [other] = await tx
        .select({ id: emailTemplates.id })
        .from(emailTemplates)
        .where(and(scopeOf(studyKey), eq(emailTemplates.messageType, messageType)))
        .limit(1);
      if (other && other.id !== id) {
        throw new Conflict(`another e-mail template of type "${messageType}" exists in the same scope`);
      }
      [row] = await tx.update(emailTemplates).set(values).where(eq(emailTemplates.id, id)).returning();
    }
    if (!row) throw new Error("e-mail template save returned nothing");
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "email-template.save",
      target: messageType,
      details: {
        id: row.id,
        messageType,
        created: previous === undefined,
        languages: values.translations.map((translation) => translation.lang),
        ...(previous && previous.messageType !== messageType ? { previousMessageType: previous.messageType } : {}),
      },
    });
    return presentEmailTemplate(row);
  });
}

/**
 * Deletes the template of a type in a scope; as case-backend, answering the same whether or not
 * there was one. A deletion is audited (`email-template.delete`, with its languages).
 */
export async function deleteEmailTemplate(
  db: Executor,
  studyKey: string | null,
  messageType: string,
  actor: string,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [removed] = await tx
      .delete(emailTemplates)
      .where(and(scopeOf(studyKey), eq(emailTemplates.messageType, messageType)))
      .returning();
    if (!removed) return false;
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "email-template.delete",
      target: messageType,
      details: { id: removed.id, messageType, translations: removed.translations },
    });
    return true;
  });
}
