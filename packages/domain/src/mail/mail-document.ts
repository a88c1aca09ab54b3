// What every mail is made of, whoever renders it (the account mails, participant messages,
// researcher notifications): the rendered parts, the languages, HTML escaping.

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
  /** The template's own sender headers, where it overrides the deployment's (MAIL_FROM). */
  headers?: MailHeaders;
}

/**
 * Sender headers an e-mail template sets for its mails (case-backend's `headerOverrides`): its own
 * From and Sender, and its own Reply-To list, empty for none at all (`noReplyTo`). What a template
 * leaves empty is the deployment's.
 */
export interface MailHeaders {
  from?: string;
  sender?: string;
  replyTo?: string[];
}

/**
 * A template's stored `headerOverrides` (`from`, `sender`, `replyTo`, `noReplyTo`) as the headers its
 * mails carry; undefined when it overrides nothing. Read as stored JSON: a field of another type
 * counts as empty.
 */
export function mailHeadersOf(overrides: unknown): MailHeaders | undefined {
  if (typeof overrides !== "object" || overrides === null) return undefined;
  const { from, sender, replyTo, noReplyTo } = overrides as Record<string, unknown>;
  // one header line each, whatever was saved
  const clean = (value: unknown) => (typeof value === "string" ? value.replace(/[\p{Cc}\p{Cf}]/gu, " ").trim() : "");
  const headers: MailHeaders = {};
  if (clean(from)) headers.from = clean(from);
  if (clean(sender)) headers.sender = clean(sender);
  const replies = (Array.isArray(replyTo) ? replyTo : []).map(clean).filter((address) => address !== "");
  // as case-backend: noReplyTo wins over a list, and an empty list keeps the deployment's
  if (noReplyTo === true) headers.replyTo = [];
  else if (replies.length > 0) headers.replyTo = replies;
  return Object.keys(headers).length > 0 ? headers : undefined;
}

export type MailLanguage = "en" | "de";

/** The account templates exist in English and German; anything else reads English. */
export function mailLanguage(language: string | null | undefined): MailLanguage {
  const primary = language?.trim().toLowerCase().split(/[-_]/)[0];
  return primary === "de" ? "de" : "en";
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text as HTML text content or attribute value: the five characters HTML gives meaning to, escaped. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

/** Blocks are HTML already: callers escape the text they put in them (escapeHtml). */
export function htmlDocument(language: string, blocks: string[]): string {
  return `<!doctype html>\n<html lang="${escapeHtml(language)}">\n<body>\n${blocks.join("\n")}\n</body>\n</html>\n`;
}

/** Subjects stay within what mail clients show on one line. */
const MAX_SUBJECT_LENGTH = 250;

/**
 * A subject as one header line: control and format characters become spaces, so no subject a
 * researcher writes (nor a value rendered into it) can forge a header, and it is cut to what mail
 * clients show on one line.
 */
export function subjectLine(text: string): string {
  const line = text
    .replace(/[\p{Cc}\p{Cf}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > MAX_SUBJECT_LENGTH ? `${line.slice(0, MAX_SUBJECT_LENGTH - 1)}…` : line;
}
