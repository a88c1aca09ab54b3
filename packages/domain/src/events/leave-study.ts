import { and, eq } from "drizzle-orm";
import { confidentialResponses, type Database } from "@studyflow/db";
import { Conflict } from "../errors";
import { participantIdsForProfile } from "../participants/participant-ids";
import { lockParticipantOrThrow, type ParticipantRow } from "../participants/participant-repository";
import { getActiveStudy } from "../studies/study-repository";
import { applyEvent } from "./apply-event";
import { inEventTransaction, type DomainContext } from "./event-runner";
import type { RuleFailureRecord } from "./rule-failures";

/**
 * The profile's participant leaves: status `exited` first (so LEAVE rules see it and may
 * override it), then the LEAVE rules; its confidential responses are removed. Returns the
 * participant as it is after the rules.
 */
export async function leaveStudy(
  db: Database,
  input: { studyKey: string; profileId: string },
  ctx: DomainContext,
): Promise<{ participant: ParticipantRow; warnings: RuleFailureRecord[] }> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const ids = participantIdsForProfile(study.secret, input.profileId);
    const row = await lockParticipantOrThrow(tx, study.key, ids.participantId);
    if (row.studyStatus !== "active") {
      throw new Conflict(`participant is not active in study "${study.key}" (status "${row.studyStatus}")`);
    }
    const { participant } = await applyEvent(
      tx,
      {
        study,
        row,
        preset: { studyStatus: "exited" },
        event: { type: "LEAVE", studyKey: study.key, participantIDForConfidentialResponses: ids.confidentialId },
      },
      eventCtx,
    );
    await tx
      .delete(confidentialResponses)
      .where(
        and(
          eq(confidentialResponses.studyKey, study.key),
          eq(confidentialResponses.confidentialId, ids.confidentialId),
        ),
      );
    return { participant, warnings: eventCtx.failures };
  });
}
