import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { researcherSubscriptions, type Executor } from "@studyflow/db";
import { normalizeEmail } from "../participant-accounts/password-reset";
import { recordAudit } from "../foundation/audit";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";

/**
 * Researchers subscribed to a study's NOTIFY_RESEARCHER messages: one row per study, message type
 * (or {@link ANY_MESSAGE_TYPE}) and e-mail address. Changes are audited in their transaction.
 */

/** The message type of a subscription to every type of the study's notifications. */
export const ANY_MESSAGE_TYPE = "*";
/** Longest message type: the rules' types are short names; this only stops a pasted document. */
export const MAX_MESSAGE_TYPE_LENGTH = 200;
/** Longest address SMTP carries (RFC 5321: a 256-octet path, less the angle brackets). */
export const MAX_SUBSCRIPTION_EMAIL_LENGTH = 254;

export interface ResearcherSubscription {
  id: number;
  studyKey: string;
  /** A NOTIFY_RESEARCHER message type, or "*" for every type. */
  messageType: string;
  email: string;
  createdBy: string;
  createdAt: Date;
}

export interface SubscriptionInput {
  messageType: string;
  email: string;
}

const emailSchema = z.email();

/** Why a message type cannot be subscribed to, or null. Types are matched exactly, so nothing is trimmed. */
export function messageTypeProblem(messageType: string): string | null {
  if (messageType.trim() === "") return "must not be empty";
  if (messageType !== messageType.trim()) return "must not start or end with spaces";
  if (messageType.length > MAX_MESSAGE_TYPE_LENGTH) return `is longer than ${MAX_MESSAGE_TYPE_LENGTH} characters`;
  // it ends up in mail subjects: no line breaks or other control characters
  if (/[\p{Cc}\p{Cf}]/u.test(messageType)) return "must not contain control characters";
  return null;
}

/**
 * The address as stored: trimmed and lower-cased as login e-mails are (accounts' normalizeEmail),
 * so one researcher is one subscriber however the address was typed.
 *
 * @throws Invalid when it is not a single e-mail address.
 */
export function subscriptionEmail(email: string): string {
  const normalized = normalizeEmail(email);
  if (normalized.length > MAX_SUBSCRIPTION_EMAIL_LENGTH) {
    throw new Invalid(`email: is longer than ${MAX_SUBSCRIPTION_EMAIL_LENGTH} characters`);
  }
  if (!emailSchema.safeParse(normalized).success) throw new Invalid(`email: "${email}" is not an e-mail address`);
  return normalized;
}

const columns = {
  id: researcherSubscriptions.id,
  studyKey: researcherSubscriptions.studyKey,
  messageType: researcherSubscriptions.messageType,
  email: researcherSubscriptions.email,
  createdBy: researcherSubscriptions.createdBy,
  createdAt: researcherSubscriptions.createdAt,
};

/** The study's subscriptions by message type ("*" first), then address. */
export async function listSubscriptions(db: Executor, studyKey: string): Promise<ResearcherSubscription[]> {
  await getStudy(db, studyKey);
  return db
    .select(columns)
    .from(researcherSubscriptions)
    .where(eq(researcherSubscriptions.studyKey, studyKey))
    .orderBy(asc(researcherSubscriptions.messageType), asc(researcherSubscriptions.email));
}

/**
 * Subscribes an address to a message type of the study, recording `subscription.add` in the same
 * transaction. Subscribing again is no error: the existing subscription comes back with
 * `created: false`, and nothing is written or audited.
 */
export async function addSubscription(
  db: Executor,
  studyKey: string,
  input: SubscriptionInput,
  actor: string,
): Promise<{ subscription: ResearcherSubscription; created: boolean }> {
  const problem = messageTypeProblem(input.messageType);
  if (problem) throw new Invalid(`messageType: ${problem}`);
  const email = subscriptionEmail(input.email);
  const messageType = input.messageType;
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [created] = await tx
      .insert(researcherSubscriptions)
      .values({ studyKey, messageType, email, createdBy: actor })
      .onConflictDoNothing()
      .returning(columns);
    if (created) {
      await recordAudit(tx, {
        studyKey,
        actor,
        action: "subscription.add",
        target: String(created.id),
        details: { messageType, email },
      });
      return { subscription: created, created: true };
    }
    const [existing] = await tx
      .select(columns)
      .from(researcherSubscriptions)
      .where(
        and(
          eq(researcherSubscriptions.studyKey, studyKey),
          eq(researcherSubscriptions.messageType, messageType),
          eq(researcherSubscriptions.email, email),
        ),
      )
      .limit(1);
    // the conflict was with a row a concurrent removal has deleted since: a rare race, safe to retry
    if (!existing) throw new Error("subscription vanished while it was being added; try again");
    return { subscription: existing, created: false };
  });
}

/** Removes one subscription of the study, recording `subscription.remove`; NotFound if the study has none with this id. */
export async function removeSubscription(
  db: Executor,
  studyKey: string,
  id: number,
  actor: string,
): Promise<ResearcherSubscription> {
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    // ids are bigserial: anything else names no subscription (and must not reach the query as one)
    if (!Number.isSafeInteger(id) || id < 1) throw new NotFound(`subscription ${id} not found in study "${studyKey}"`);
    const [removed] = await tx
      .delete(researcherSubscriptions)
      .where(and(eq(researcherSubscriptions.studyKey, studyKey), eq(researcherSubscriptions.id, id)))
      .returning(columns);
    if (!removed) throw new NotFound(`subscription ${id} not found in study "${studyKey}"`);
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "subscription.remove",
      target: String(id),
      details: { messageType: removed.messageType, email: removed.email },
    });
    return removed;
  });
}
