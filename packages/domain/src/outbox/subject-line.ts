/** Subjects stay within what mail clients show on one line. */
const MAX_SUBJECT_LENGTH = 250;

/**
 * A subject as one header line: control and format characters become spaces, so no subject a
 * researcher writes can forge a header, and it is cut to what mail clients show on one line.
 */
export function subjectLine(text: string): string {
  const line = text
    .replace(/[\p{Cc}\p{Cf}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > MAX_SUBJECT_LENGTH ? `${line.slice(0, MAX_SUBJECT_LENGTH - 1)}…` : line;
}
