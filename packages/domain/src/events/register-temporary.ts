import type { Database } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { newTemporaryParticipantId, newVirtualParticipantId } from "../participants/participant-ids";
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

/**
 * A researcher creates a virtual participant (CASE's status `virtual`): a participant without an
 * account, whose data researchers enter on its behalf until a profile claims it by a linking code
 * (mergeVirtualParticipant). The ENTER rules run for it, as for any participant. Audited.
 */
export async function registerVirtualParticipant(
  db: Database,
  input: { studyKey: string; actor: string },
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const { row } = await insertOrLockParticipant(tx, {
      studyKey: study.key,
      participantId: newVirtualParticipantId(study),
      studyStatus: "virtual",
      enteredAt: nowSeconds(ctx),
    });
    // As case-backend: no confidential id, no profile stands behind it yet.
    const participant = await runEnter(tx, study, row, "virtual", undefined, eventCtx);
    await recordAudit(
      tx,
      {
        studyKey: study.key,
        actor: input.actor,
        action: "participant.create-virtual",
        target: participant.participantId,
      },
      new Date(ctx.clock()),
    );
    return { participant, warnings: eventCtx.failures };
  });
}
