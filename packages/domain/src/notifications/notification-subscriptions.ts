import { eq } from "drizzle-orm";
import { researcherSubscriptions, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Invalid } from "../errors";
import { messageTypeProblem, subscriptionEmail, type SubscriptionInput } from "./subscriptions";
import { getStudy } from "../studies/study-repository";

/** Most subscriptions a study holds: each one is a mail per notification. */
export const MAX_STUDY_SUBSCRIPTIONS = 500;

/**
 * Replaces every researcher subscription of the study with `list` (case-backend's PUT
 * notification-subscriptions), in one transaction with its audit entry `subscription.replace`.
 * Each entry is checked as addSubscription checks it (Invalid naming `subscriptions[i].field`);
 * an address given twice for one message type is kept once. @throws NotFound for an unknown study.
 */
export async function replaceSubscriptions(
  db: Executor,
  studyKey: string,
  list: readonly SubscriptionInput[],
  actor: string,
): Promise<{ messageType: string; email: string }[]> {
  if (list.length > MAX_STUDY_SUBSCRIPTIONS) {
    throw new Invalid(`subscriptions: at most ${MAX_STUDY_SUBSCRIPTIONS} subscriptions`);
  }
  const rows = new Map<string, { messageType: string; email: string }>();
  list.forEach((item, i) => {
    const problem = messageTypeProblem(item.messageType);
    if (problem) throw new Invalid(`subscriptions[${i}].messageType: ${problem}`);
    let email: string;
    try {
      email = subscriptionEmail(item.email);
    } catch (error) {
      if (error instanceof Invalid) throw new Invalid(`subscriptions[${i}].${error.message}`);
      throw error;
    }
    rows.set(JSON.stringify([item.messageType, email]), { messageType: item.messageType, email });
  });
  const wanted = [...rows.values()];
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const before = await tx
      .delete(researcherSubscriptions)
      .where(eq(researcherSubscriptions.studyKey, studyKey))
      .returning({ messageType: researcherSubscriptions.messageType, email: researcherSubscriptions.email });
    if (wanted.length > 0) {
      await tx.insert(researcherSubscriptions).values(wanted.map((row) => ({ studyKey, ...row, createdBy: actor })));
    }
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "subscription.replace",
      details: { from: before, to: wanted },
    });
  });
  return wanted;
}
