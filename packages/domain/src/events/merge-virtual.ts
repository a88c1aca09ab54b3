import type { Database } from "@studyflow/db";
import type { OwnedProfile } from "../access/permissions";
import { Invalid, NotFound } from "../errors";
import { recordAudit } from "../foundation/audit";
import { nowSeconds } from "../foundation/clock";
import { confidentialIdInStudy } from "../participants/participant-ids";
import { lockParticipant, type ParticipantRow } from "../participants/participant-repository";
import { getActiveStudy, getStudy } from "../studies/study-repository";
import { ensureProfileParticipant, runEnter } from "./enter-study";
import { inEventTransaction, type DomainContext } from "./event-runner";
import { mergeParticipantInto } from "./merge-temporary";
import type { RuleFailureRecord } from "./rule-failures";

export interface MergeVirtualInput {
  studyKey: string;
  userId: string;
  profile: OwnedProfile;
  virtualParticipantId: string;
  /** The linking code the virtual participant holds, as proof that the profile's person is the one it stands for. */
  linkingCodeKey: string;
  linkingCodeValue: string;
}

/**
 * A profile claims a virtual participant, as case-backend's merge-virtual-participant does: the
 * virtual participant must hold the linking code sent; the profile's participant (entered first
 * when missing) takes its state, responses, reports and confidential responses, as when a
 * temporary participant is merged. An unknown id, a participant that is not virtual and a wrong
 * code answer alike, so the route is no oracle for ids or codes.
 */
export async function mergeVirtualParticipant(
  db: Database,
  input: MergeVirtualInput,
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const virtual = await lockParticipant(tx, study.key, input.virtualParticipantId);
    const holdsCode =
      virtual !== undefined &&
      Object.hasOwn(virtual.linkingCodes, input.linkingCodeKey) &&
      virtual.linkingCodes[input.linkingCodeKey] === input.linkingCodeValue;
    if (!virtual || virtual.studyStatus !== "virtual" || !holdsCode) {
      throw new NotFound("virtual participant not found, or it does not hold this linking code");
    }
    const ensured = await ensureProfileParticipant(
      tx,
      { study, userId: input.userId, profile: input.profile },
      eventCtx,
    );
    const target = ensured.created
      ? await runEnter(tx, study, ensured.row, "active", ensured.confidentialId, eventCtx)
      : ensured.row;
    const participant = await mergeParticipantInto(
      tx,
      { study, target, targetConfidentialId: ensured.confidentialId, incoming: virtual, at: nowSeconds(ctx) },
      eventCtx,
    );
    return { participant, warnings: eventCtx.failures };
  });
}

export interface ForceMergeInput {
  studyKey: string;
  targetParticipantId: string;
  withParticipantId: string;
  actor: string;
}

/**
 * A researcher merges one participant into another (case-backend's force merge): whatever their
 * statuses, `with` is merged into `target` as a temporary participant is merged into a profile's,
 * then deleted. Audited (`participants.merge`).
 */
export async function forceMergeParticipants(
  db: Database,
  input: ForceMergeInput,
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  if (input.targetParticipantId === input.withParticipantId) {
    throw new Invalid("target participant ID and with participant ID are the same");
  }
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getStudy(tx, input.studyKey);
    // one lock order for every merge of the same two participants, whichever is the target
    const locked = new Map<string, ParticipantRow | undefined>();
    for (const id of [input.targetParticipantId, input.withParticipantId].sort()) {
      locked.set(id, await lockParticipant(tx, study.key, id));
    }
    const target = locked.get(input.targetParticipantId);
    const incoming = locked.get(input.withParticipantId);
    for (const [id, row] of [
      [input.targetParticipantId, target],
      [input.withParticipantId, incoming],
    ] as const) {
      if (!row) throw new NotFound(`participant "${id}" not found in study "${study.key}"`);
    }
    const participant = await mergeParticipantInto(
      tx,
      {
        study,
        target: target!,
        targetConfidentialId: confidentialIdInStudy(study, target!.participantId),
        incoming: incoming!,
        at: nowSeconds(ctx),
      },
      eventCtx,
    );
    await recordAudit(
      tx,
      {
        studyKey: study.key,
        actor: input.actor,
        action: "participants.merge",
        target: participant.participantId,
        details: { merged: input.withParticipantId },
      },
      new Date(ctx.clock()),
    );
    return { participant, warnings: eventCtx.failures };
  });
}
