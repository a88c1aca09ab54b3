import type { RenderedMail } from "../mail/mail-document";
import { UndeliverableMessage } from "../mail/undeliverable-message";

/**
 * The e-mail a NOTIFY_RESEARCHER message becomes for one subscriber: the outbox row's template
 * name, the payload queued with it, and its rendering (plain text and HTML, English: researchers'
 * mails are not localised).
 */

/** The outbox template of researcher notifications. */
export const RESEARCHER_NOTIFICATION_TEMPLATE = "researcher-notification";

/** Values are what rules put there; a value this long is cut rather than flooding the mail. */
const MAX_SHOWN_LENGTH = 1_000;
/** Subjects stay within what mail clients show on one line. */
const MAX_SUBJECT_LENGTH = 150;

/** What the outbox row carries; rendered when it is sent. */
export type ResearcherNotificationPayload = {
  /** The researcher_messages row, so an operator can tell which notification a mail came from. */
  notificationId: string;
  studyKey: string;
  messageType: string;
  /** The participant's id in the study: a pseudonym, not the account or profile. */
  participantId: string;
  /** ISO 8601: when the rule raised the notification. */
  raisedAt: string;
  /** The subscription that matched: the message type, or "*". */
  subscribedTo: string;
  /** The key/value pairs of the rule's NOTIFY_RESEARCHER call. */
  values: Record<string, string>;
};

/**
 * One line of plain text: control and format characters (line breaks, bidi overrides) become
 * spaces, so a value can neither forge a line of the mail nor a header, and long values are cut.
 */
function shown(value: string, max = MAX_SHOWN_LENGTH): string {
  const line = value
    .replace(/[\p{Cc}\p{Cf}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

function requiredText(payload: Record<string, unknown>, key: string): string {
  const value = payload[key];
  if (typeof value !== "string" || shown(value) === "") {
    throw new UndeliverableMessage(`researcher notification has no ${key} in its payload`);
  }
  return shown(value);
}

function optionalText(payload: Record<string, unknown>, key: string): string | null {
  const value = payload[key];
  return typeof value === "string" && shown(value) !== "" ? shown(value) : null;
}

/** The pairs in key order (jsonb keeps no order of its own), string values only. */
function valuesOf(payload: Record<string, unknown>): [string, string][] {
  const values = payload.values;
  if (typeof values !== "object" || values === null || Array.isArray(values)) return [];
  return Object.entries(values as Record<string, unknown>)
    .flatMap(([key, value]) => (typeof value === "string" ? [[shown(key, 200), shown(value)] as [string, string]] : []))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Renders a researcher notification. It shows what a notification is defined to carry and nothing
 * else of its payload: the study, the type, the participant's pseudonymous id, when it was raised,
 * the subscription, and the text values the rule's NOTIFY_RESEARCHER call named. The participant's
 * flags and linking codes are not among them (unless a rule put one in its values). Everything in
 * it comes from rules and participants, so every value is reduced to one line of text, and escaped
 * in the HTML part.
 *
 * @throws UndeliverableMessage when the payload names no study or message type.
 */
export function renderResearcherNotification(payload: Record<string, unknown>): RenderedMail {
  const studyKey = requiredText(payload, "studyKey");
  const messageType = requiredText(payload, "messageType");
  const participantId = optionalText(payload, "participantId");
  const raisedAt = optionalText(payload, "raisedAt");
  const subscribedTo = optionalText(payload, "subscribedTo") ?? messageType;
  const values = valuesOf(payload);

  const subject = shown(`studyflow: ${messageType} (study ${studyKey})`, MAX_SUBJECT_LENGTH);
  const intro = `A rule of study "${studyKey}" sent a researcher notification of type "${messageType}".`;
  const facts: [string, string][] = [
    ["study", studyKey],
    ["type", messageType],
    ...(participantId ? [["participant", `${participantId} (pseudonymous id in this study)`] as [string, string]] : []),
    ...(raisedAt ? [["raised at", raisedAt] as [string, string]] : []),
  ];
  const why =
    subscribedTo === "*"
      ? `You receive this because this address is subscribed to every notification of study "${studyKey}".`
      : `You receive this because this address is subscribed to "${subscribedTo}" notifications of study "${studyKey}".`;
  const unsubscribe = "A study manager can remove the subscription.";
  const noValues = "The notification carries no values.";

  const lines = (pairs: [string, string][]) => pairs.map(([key, value]) => `${key}: ${value}`);
  const text = [
    intro,
    "",
    ...lines(facts),
    "",
    ...(values.length > 0 ? lines(values) : [noValues]),
    "",
    `${why} ${unsubscribe}`,
  ].join("\n");

  const list = (pairs: [string, string][]) =>
    `<ul>\n${pairs.map(([key, value]) => `<li><strong>${escapeHtml(key)}</strong>: ${escapeHtml(value)}</li>`).join("\n")}\n</ul>`;
  const html = [
    "<!doctype html>",
    '<html lang="en">',
    "<body>",
    `<p>${escapeHtml(intro)}</p>`,
    list(facts),
    values.length > 0 ? list(values) : `<p>${escapeHtml(noValues)}</p>`,
    `<p>${escapeHtml(`${why} ${unsubscribe}`)}</p>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");

  return { subject, text: `${text}\n`, html };
}
