import { eq } from "drizzle-orm";
import { studies, type Executor, type StudyProps } from "@studyflow/db";
import { DomainError } from "../errors";
import { escapeHtml, htmlDocument, type RenderedMail } from "../mail/mail-document";
import { UndeliverableMessage } from "../mail/undeliverable-message";
import { chooseTemplate, templatesOfType, type MessageTemplate } from "./message-templates";
import { parseTemplate, renderTemplate } from "./template-syntax";

/** Subjects stay within what mail clients show on one line, whatever the values make of them. */
const MAX_RENDERED_SUBJECT_LENGTH = 250;

/** The study's name in the template's language, else its primary language, English, any, or its key. */
function studyNameIn(props: StudyProps, studyKey: string, language: string): string {
  const names = props.name ?? {};
  const primary = language.split("-")[0] ?? language;
  return names[language] ?? names[primary] ?? names.en ?? Object.values(names)[0] ?? studyKey;
}

/** One header line: control and format characters become spaces, so no value can forge a header. */
function oneLine(text: string): string {
  const line = text
    .replace(/[\p{Cc}\p{Cf}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > MAX_RENDERED_SUBJECT_LENGTH ? `${line.slice(0, MAX_RENDERED_SUBJECT_LENGTH - 1)}…` : line;
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
      oneLine(renderTemplate(parseTemplate(template.subject, "subject"), values)) || oneLine(message.messageType);
    const text = renderTemplate(parseTemplate(template.body, "body"), values);
    return { subject, text: `${text.replace(/\s+$/, "")}\n`, html: htmlDocument(template.language, textAsHtml(text)) };
  } catch (error) {
    // Templates are checked on upload; one stored otherwise (by hand) cannot become valid by retrying.
    if (error instanceof DomainError) throw new UndeliverableMessage(`message template is invalid: ${error.message}`);
    throw error;
  }
}

/**
 * The e-mail of a participant message (scheduled or SEND_MESSAGE_NOW) from the study's template
 * for its type, in the language {@link chooseTemplate} picks for `language` (the message's
 * override, else the recipient's); null when the study has no template for the type.
 */
export async function renderParticipantMessage(
  db: Executor,
  message: ParticipantMessageToRender,
  language: string | null,
): Promise<RenderedMail | null> {
  const template = chooseTemplate(await templatesOfType(db, message.studyKey, message.messageType), [language]);
  if (!template) return null;
  const [study] = await db
    .select({ props: studies.props })
    .from(studies)
    .where(eq(studies.key, message.studyKey))
    .limit(1);
  return renderMessageTemplate(template, message, study?.props ?? {});
}
