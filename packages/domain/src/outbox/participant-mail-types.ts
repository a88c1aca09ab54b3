import { UndeliverableMessage } from "../mail/undeliverable-message";

/**
 * The participant mails of a CASE instance, by case-backend's message type
 * (pkg/messaging/types/emailTemplate.go), each with whether studyflow sends it. An instance writes
 * these mails as global e-mail templates in case-admin; studyflow sends its own built-in mail only
 * for a type that has none. `studyflowOnly` types are studyflow's own (case-backend sends no such
 * mail): an instance may add a global template of that type too.
 */
export interface ParticipantMailType {
  messageType: string;
  /** When studyflow sends it; null for a CASE type studyflow never sends (invitations: no such flow). */
  sentWhen: string | null;
  /** The keys a template of this type is rendered with, besides `language`. */
  keys: readonly string[];
  studyflowOnly?: true;
}

export const PARTICIPANT_MAIL_TYPES: readonly ParticipantMailType[] = [
  {
    messageType: "registration",
    sentWhen: "sign-up, a resend and the reminder to confirm: the link confirming the account's address",
    keys: ["token"],
  },
  {
    messageType: "verify-email",
    sentWhen: "to the new address of an address change: the link confirming it",
    keys: ["token"],
  },
  { messageType: "verification-code", sentWhen: "a sign-in code (OTP)", keys: ["verificationCode"] },
  { messageType: "password-reset", sentWhen: "a password reset link", keys: ["token", "validUntil"] },
  { messageType: "password-changed", sentWhen: "after a password change or reset", keys: [] },
  {
    messageType: "account-id-changed",
    sentWhen: "to the old address, once an address change took effect",
    keys: ["newEmail"],
  },
  { messageType: "account-deleted", sentWhen: "after the account's deletion", keys: [] },
  { messageType: "invitation", sentWhen: null, keys: ["token"] },
  { messageType: "account-inactivity", sentWhen: "the notice before an inactive account is deleted", keys: [] },
  {
    messageType: "account-deleted-after-inactivity",
    sentWhen: "after an account's deletion for inactivity",
    keys: [],
  },
  {
    messageType: "signup-attempt",
    sentWhen: "to the owner of an address someone tried to sign up with",
    keys: ["resetUrl"],
    studyflowOnly: true,
  },
  {
    messageType: "email-change-requested",
    sentWhen: "to the current address when an address change is requested",
    keys: ["newEmail"],
    studyflowOnly: true,
  },
];

/** The template an outbox row of a participant mail is written with, and its data. */
export interface InstanceTemplateCall {
  messageType: string;
  /** The values case-backend passes for this type (without `language`, added by the renderer). */
  data: Record<string, string>;
}

function httpUrl(payload: Record<string, unknown>, key: string, template: string): URL {
  const value = payload[key];
  if (typeof value !== "string" || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new UndeliverableMessage(`${template} message has no valid ${key} in its payload`);
  }
  return new URL(value);
}

/**
 * The account token of a mailed link: case-backend's templates build the link themselves from
 * `.token` (the participant app's page and `?token=`), so they get the token, not studyflow's link.
 */
function linkToken(payload: Record<string, unknown>, key: string, template: string): string {
  const token = httpUrl(payload, key, template).searchParams.get("token");
  if (!token) throw new UndeliverableMessage(`${template} message's ${key} has no token`);
  return token;
}

function text(payload: Record<string, unknown>, key: string, template: string): string {
  const value = payload[key];
  if (typeof value !== "string" || value === "") {
    throw new UndeliverableMessage(`${template} message has no ${key} in its payload`);
  }
  // one line: the value was validated when queued, but a template may put it anywhere
  return value.replace(/[\p{Cc}\p{Cf}]/gu, "").slice(0, 254);
}

/**
 * Which global template an outbox row of a participant mail is rendered with, and the data
 * case-backend passes for that type (services/participant-api/apihandlers: prepTokenAndSendEmail
 * adds `token`; password-reset `validUntil`; requestOTP `verificationCode`; change-account-email
 * `newEmail`). Null for a row that is no participant mail of the instance (study messages,
 * researcher notifications, scheduled e-mails).
 *
 * @throws UndeliverableMessage when the payload lacks what the type needs (the link, the code).
 */
export function instanceTemplateCall(template: string, payload: Record<string, unknown>): InstanceTemplateCall | null {
  switch (template) {
    case "verify-email":
      // Sign-up's link, and a resend of it: case-backend's signup sends "registration" (and its
      // reminder sends it again); a row may name "verify-email" for case-backend's resend mail.
      return {
        messageType: payload.messageType === "verify-email" ? "verify-email" : "registration",
        data: { token: linkToken(payload, "verifyUrl", template) },
      };
    case "registration":
      // the reminder to confirm an address (account lifecycle): the sign-up mail again
      return { messageType: "registration", data: { token: linkToken(payload, "verifyUrl", template) } };
    case "email-change-verify":
      return { messageType: "verify-email", data: { token: linkToken(payload, "verifyUrl", template) } };
    case "otp-code": {
      const code = payload.code;
      if (typeof code !== "string" || !/^\d{6}$/.test(code)) {
        throw new UndeliverableMessage("otp-code message has no 6-digit code in its payload");
      }
      return { messageType: "verification-code", data: { verificationCode: code } };
    }
    case "password-reset": {
      const hours = payload.validForHours;
      return {
        messageType: "password-reset",
        data: {
          token: linkToken(payload, "resetUrl", template),
          // case-backend passes its 24-hour lifetime as "24"
          ...(typeof hours === "number" && Number.isFinite(hours) && hours > 0 ? { validUntil: String(hours) } : {}),
        },
      };
    }
    case "password-changed":
      return { messageType: "password-changed", data: {} };
    case "email-changed":
      return { messageType: "account-id-changed", data: { newEmail: text(payload, "newEmail", template) } };
    case "account-deleted":
    case "account-inactivity":
    case "account-deleted-after-inactivity":
      // case-backend's inactivity notice carries a token of a purpose studyflow has no use for
      return { messageType: template, data: {} };
    case "signup-attempt":
      return { messageType: "signup-attempt", data: { resetUrl: httpUrl(payload, "resetUrl", template).toString() } };
    case "email-change-requested":
      return { messageType: "email-change-requested", data: { newEmail: text(payload, "newEmail", template) } };
    default:
      return null;
  }
}
