import type { Executor } from "@studyflow/db";
import {
  decodeTemplateDef,
  findEmailTemplate,
  listGlobalEmailTemplates,
  templateTranslationFor,
} from "../messages/case-email-templates";
import { GoTemplateError, executeGoTemplate, parseGoTemplate } from "@studyflow/go-template";
import { PARTICIPANT_MAIL_TYPES, instanceTemplateCall, type ParticipantMailType } from "./participant-mail-types";
import { mailHeadersOf, subjectLine, type RenderedMail } from "../mail/mail-document";

/** What rendering a row with the instance's template came to. */
export type InstanceTemplateOutcome =
  /** The row is no participant mail, or its type has no global template: the built-in mail. */
  | { kind: "none" }
  | { kind: "rendered"; mail: Omit<RenderedMail, "subject"> & { subject: string | null } }
  /** The template exists but could not be rendered for this recipient: why. */
  | { kind: "failed"; reason: string };

/**
 * Renders a participant mail (sign-up, code, reset, …) with the instance's global e-mail template
 * of its CASE message type, as case-backend does: the translation in `language` (else the
 * default), executed with case-backend's data for the type plus `language`, the translation's
 * subject as given (a template's subject is text, not a template: no value, so no code or link,
 * reaches it; `subject` null when it is empty). The body is HTML, sent as HTML only, as
 * case-backend sends it. Read at delivery, so a template edited after a mail was queued applies
 * to it; nothing rendered is stored, so the row's secrets stay in the payload fields the outbox
 * clears when the row ends.
 *
 * @throws UndeliverableMessage when the payload lacks what the type needs (the link, the code).
 */
export async function renderInstanceTemplateMail(
  db: Executor,
  outboxTemplate: string,
  language: string | null,
  payload: Record<string, unknown>,
): Promise<InstanceTemplateOutcome> {
  const call = instanceTemplateCall(outboxTemplate, payload);
  if (!call) return { kind: "none" };
  const template = await findEmailTemplate(db, null, call.messageType);
  if (!template) return { kind: "none" };
  const lang = language ?? "";
  const translation = templateTranslationFor(template, lang);
  if (!translation) return { kind: "failed", reason: `global template "${call.messageType}" has no translation` };
  const at = `global template "${call.messageType}" (lang "${translation.lang}")`;
  const source = decodeTemplateDef(translation.templateDef);
  if (source === null) return { kind: "failed", reason: `${at} is not base64` };
  try {
    const html = executeGoTemplate(parseGoTemplate(source), { ...call.data, language: lang });
    if (html.trim() === "") return { kind: "failed", reason: `${at} rendered empty` };
    const subject = subjectLine(translation.subject);
    const headers = mailHeadersOf(template.headerOverrides);
    return {
      kind: "rendered",
      mail: { subject: subject === "" ? null : subject, text: "", html, ...(headers ? { headers } : {}) },
    };
  } catch (error) {
    if (error instanceof GoTemplateError) {
      return { kind: "failed", reason: `${at} could not be rendered: ${error.message}` };
    }
    throw error;
  }
}

/** A participant mail type and the instance's global template of it, as the console lists them. */
export interface ParticipantMailCoverage extends ParticipantMailType {
  template: { defaultLanguage: string; languages: string[] } | null;
}

/** Every participant mail type, with whether the instance has a global template of it and in which languages. */
export async function participantMailCoverage(db: Executor): Promise<ParticipantMailCoverage[]> {
  const templates = new Map((await listGlobalEmailTemplates(db)).map((template) => [template.messageType, template]));
  return PARTICIPANT_MAIL_TYPES.map((type) => {
    const template = templates.get(type.messageType);
    return {
      ...type,
      template: template
        ? {
            defaultLanguage: template.defaultLanguage,
            languages: template.translations.map((translation) => translation.lang),
          }
        : null,
    };
  });
}
