import { sql, type SQL } from "drizzle-orm";
import { outgoingMessages } from "@studyflow/db";
import { SCHEDULED_EMAIL_TEMPLATE } from "../messages/scheduled-emails";

/**
 * The payload fields, per outbox template, that hold a live one-time secret: a link with an
 * account token, a sign-in code, or a mail rendered around one. The tokens themselves are stored
 * hashed; the outbox must keep them in plain text only until the mail is out. Once a row ends
 * (sent, failed for good, expired) these fields are removed in the statement that records the
 * end, and what an operator reads of the history stays: template, recipient, times, status and
 * error.
 *
 * A template that writes a new secret into its payload adds its fields here, and nowhere else.
 * Not secrets, and kept: `signup-attempt`'s resetUrl (the reset page, no token), the new address
 * of the e-mail-change notices, the values of study messages (what a study's template shows).
 */
export const SECRET_PAYLOAD_FIELDS: Readonly<Record<string, readonly string[]>> = {
  /** The reset link, with its token (participant-accounts/password-reset.ts). */
  "password-reset": ["resetUrl"],
  /** The sign-up confirmation link, which also signs in (participant-sign-in/sign-in.ts). */
  "verify-email": ["verifyUrl"],
  /**
   * The reminder to confirm an address: the same link, and its token as CASE's templates take it
   * (participant-accounts/lifecycle/).
   */
  registration: ["verifyUrl", "token"],
  /** The link that makes a new address the account's (participant-accounts/change-email.ts). */
  "email-change-verify": ["verifyUrl"],
  /** The sign-in code (participant-sign-in/sign-in.ts). */
  "otp-code": ["code"],
  /**
   * A scheduled e-mail as rendered for its reader: it holds their newsletter unsubscribe token or
   * survey-login token when the template shows one (messages/scheduled-emails.ts).
   */
  [SCHEDULED_EMAIL_TEMPLATE]: ["html"],
};

/**
 * The payload of a row as it ends: without the secret fields of its template (jsonb `-` of the
 * field names), the rest as it was.
 */
export const payloadWithoutSecrets: SQL = sql`case ${outgoingMessages.template} ${sql.join(
  Object.entries(SECRET_PAYLOAD_FIELDS).map(
    ([template, fields]) =>
      sql`when ${template}::text then ${outgoingMessages.payload} - array[${sql.join(
        fields.map((field) => sql`${field}::text`),
        sql`, `,
      )}]`,
  ),
  sql` `,
)} else ${outgoingMessages.payload} end`;
