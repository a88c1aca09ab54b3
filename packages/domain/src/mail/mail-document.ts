// What every mail is made of, whoever renders it (the account mails, participant messages,
// researcher notifications): the rendered parts, the languages, HTML escaping.

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
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
