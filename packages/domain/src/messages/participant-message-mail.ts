import { eq } from "drizzle-orm";
import { GoTemplateError, executeGoTemplate, parseGoTemplate } from "@studyflow/go-template";
import { studies, type Executor, type StudyProps } from "@studyflow/db";
import { DomainError } from "../errors";
import { escapeHtml, htmlDocument, mailHeadersOf, subjectLine, type RenderedMail } from "../mail/mail-document";
import { UndeliverableMessage } from "../mail/undeliverable-message";
import { createAccountToken } from "../participant-accounts/account-tokens";
import {
  TEMPLATE_LOGIN_TOKEN_TTL_SECONDS,
  decodeTemplateDef,
  findEmailTemplate,
  readsLoginToken,
  templateTranslationFor,
  type CaseEmailTemplate,
} from "./case-email-templates";
import { chooseTemplate, templatesOfType, type MessageTemplate } from "./message-templates";
import { parseTemplate, renderTemplate } from "./template-syntax";

/** The study's name in the template's language, else its primary language, English, any, or its key. */
function studyNameIn(props: StudyProps, studyKey: string, language: string): string {
  const names = props.name ?? {};
  const primary = language.split("-")[0] ?? language;
  return names[language] ?? names[primary] ?? names.en ?? Object.values(names)[0] ?? studyKey;
}

/** Plain text as HTML: everything escaped, blank lines separate paragraphs, line breaks kept. */
function textAsHtml(text: string): string[] {
  return text
    .replace(/\r\n?/g, "\n")
    .split(/\n\s*\n/)
    .filter((block) => block.trim() !== "")
    .map(
      (block) =>
        `<p>${block
          .trim()
          .split("\n")
          .map((line) => escapeHtml(line))
          .join("<br>\n")}</p>`,
    );
}

/** The payload's plain values as text; nested values have no placeholder that could name them. */
function payloadValues(payload: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(payload).flatMap(([key, value]) =>
      typeof value === "string" || typeof value === "number" || typeof value === "boolean"
        ? [[key, String(value)]]
        : [],
    ),
  );
}

export interface ParticipantMessageToRender {
  studyKey: string;
  messageType: string;
  payload: Record<string, unknown>;
}

/** The recipient's profile in the study, as delivery found it from the message's confidential id. */
export interface MessageProfile {
  userId: string;
  profileId: string;
  alias: string;
}

/**
 * A participant message through the study's CASE e-mail template (the one case-admin edits under
 * the study's templates), as case-backend sends it: the translation in `language` (else the
 * template's default, else its first) executed as a Go template with the message's values
 * (`studyKey`, `flags.KEY`, `linkingCodes.KEY`, and SEND_MESSAGE_NOW's `eventData.KEY`) plus the
 * recipient's `profileId`, `profileAlias` and `language`, and `loginToken` (a week's survey-login
 * link token for the study) when the template reads it; the subject as given; HTML only; the
 * template's sender headers.
 *
 * @throws UndeliverableMessage when the template cannot be rendered: a template saved otherwise
 *   than through the checked routes does not mend by retrying.
 */
async function renderCaseStudyMessage(
  db: Executor,
  template: CaseEmailTemplate,
  message: ParticipantMessageToRender,
  language: string,
  recipient: { profile?: MessageProfile | undefined; now: Date },
): Promise<RenderedMail> {
  const { profile, now } = recipient;
  const at = `study template "${message.messageType}" of study "${message.studyKey}"`;
  const translation = templateTranslationFor(template, language);
  if (!translation) throw new UndeliverableMessage(`${at} has no translation`);
  const source = decodeTemplateDef(translation.templateDef);
  if (source === null) throw new UndeliverableMessage(`${at} (lang "${translation.lang}") is not base64`);
  const values: Record<string, string> = {
    ...(profile ? { profileAlias: profile.alias, profileId: profile.profileId } : {}),
    ...payloadValues(message.payload),
    studyKey: message.studyKey,
    language,
  };
  if (profile && readsLoginToken(source)) {
    values.loginToken = await createAccountToken(db, {
      userId: profile.userId,
      purpose: "survey-login",
      ttlSeconds: TEMPLATE_LOGIN_TOKEN_TTL_SECONDS,
      now,
      info: { studyKey: message.studyKey },
    });
  }
  try {
    const html = executeGoTemplate(parseGoTemplate(source), values);
    const headers = mailHeadersOf(template.headerOverrides);
    // an empty subject at least says what the mail is
    const subject = subjectLine(translation.subject) || subjectLine(message.messageType);
    return { subject, text: "", html, ...(headers ? { headers } : {}) };
  } catch (error) {
    if (error instanceof GoTemplateError) {
      throw new UndeliverableMessage(`${at} (lang "${translation.lang}") could not be rendered: ${error.message}`);
    }
    throw error;
  }
}

/** Renders one template over a message's payload and the study's own values. */
export function renderMessageTemplate(
  template: Pick<MessageTemplate, "language" | "subject" | "body">,
  message: ParticipantMessageToRender,
  studyProps: StudyProps,
): RenderedMail {
  const values = {
    ...payloadValues(message.payload),
    // after the payload: a rule cannot pass itself off as the study
    studyKey: message.studyKey,
    studyName: studyNameIn(studyProps, message.studyKey, template.language),
    messageType: message.messageType,
  };
  try {
    // a subject of placeholders only may render empty; the type at least says what the mail is
    const subject =
      subjectLine(renderTemplate(parseTemplate(template.subject, "subject"), values)) ||
      subjectLine(message.messageType);
    const text = renderTemplate(parseTemplate(template.body, "body"), values);
    return { subject, text: `${text.replace(/\s+$/, "")}\n`, html: htmlDocument(template.language, textAsHtml(text)) };
  } catch (error) {
    // Templates are checked on upload; one stored otherwise (by hand) cannot become valid by retrying.
    if (error instanceof DomainError) throw new UndeliverableMessage(`message template is invalid: ${error.message}`);
    throw error;
  }
}

/**
 * The e-mail of a participant message (scheduled or SEND_MESSAGE_NOW): through the study's CASE
 * e-mail template of its type when the study has one (what a CASE deployment's rules send), else
 * through its studyflow message template in the language {@link chooseTemplate} picks for
 * `language` (the message's override, else the recipient's); null when the study has neither.
 */
export async function renderParticipantMessage(
  db: Executor,
  message: ParticipantMessageToRender,
  language: string | null,
  recipient: { profile?: MessageProfile | undefined; now: Date },
): Promise<RenderedMail | null> {
  const caseTemplate = await findEmailTemplate(db, message.studyKey, message.messageType);
  if (caseTemplate) return renderCaseStudyMessage(db, caseTemplate, message, language ?? "", recipient);
  const template = chooseTemplate(await templatesOfType(db, message.studyKey, message.messageType), [language]);
  if (!template) return null;
  const [study] = await db
    .select({ props: studies.props })
    .from(studies)
    .where(eq(studies.key, message.studyKey))
    .limit(1);
  return renderMessageTemplate(template, message, study?.props ?? {});
}
