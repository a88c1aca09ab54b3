import type { Database } from "@studyflow/db";
import { newTemporaryParticipantId } from "../participants/participant-ids";
import { insertOrLockParticipant, type ParticipantRow } from "../participants/participant-repository";
import { getActiveStudy } from "../studies/study-repository";
import { inEventTransaction, type DomainContext } from "./event-runner";
import { nowSeconds } from "../foundation/clock";
import type { RuleFailureRecord } from "./rule-failures";
import { runEnter } from "./enter-study";

/**
 * Creates an anonymous, temporary participant and runs the ENTER rules for it. Its id is the
 * only proof of ownership (a random 256-bit bearer secret) until it is merged into a profile.
 */
export async function registerTemporaryParticipant(
  db: Database,
  input: { studyKey: string },
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const { row } = await insertOrLockParticipant(tx, {
      studyKey: study.key,
      participantId: newTemporaryParticipantId(),
      studyStatus: "temporary",
      enteredAt: nowSeconds(ctx),
    });
    // No confidential id: a temporary participant has no profile that messages could reach.
    const participant = await runEnter(tx, study, row, "temporary", undefined, eventCtx);
    return { participant, warnings: eventCtx.failures };
  });
}
