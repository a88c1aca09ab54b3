import { and, eq } from "drizzle-orm";
import { confidentialResponses, type Database } from "@studyflow/db";
import { Conflict } from "../errors";
import { participantIdsForProfile } from "../participants/participant-ids";
import { lockParticipantOrThrow, saveParticipantState, toEngineState } from "../participants/participant-repository";
import { persistEffects, persistReports } from "../rules/event-outcome";
import { getActiveStudy } from "../studies/study-repository";
import { nowSeconds, runEventRules, type DomainContext } from "./event-runner";
import { withStudyKey, type ClientAssignedSurvey } from "./submit-response";

/**
 * The profile's participant leaves: status `exited` first (so LEAVE rules see it and may
 * override it), then the LEAVE rules; its confidential responses are removed. Returns the
 * surveys as they are after the rules.
 */
export async function leaveStudy(
  db: Database,
  input: { studyKey: string; profileId: string },
  ctx: DomainContext,
): Promise<{ assignedSurveys: ClientAssignedSurvey[] }> {
  return db.transaction(async (tx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const ids = participantIdsForProfile(study.secret, input.profileId);
    const row = await lockParticipantOrThrow(tx, study.key, ids.participantId);
    if (row.studyStatus !== "active") {
      throw new Conflict(`participant is not active in study "${study.key}" (status "${row.studyStatus}")`);
    }
    const outcome = await runEventRules(
      tx,
      { ...toEngineState(row), studyStatus: "exited" },
      { type: "LEAVE", studyKey: study.key, participantIDForConfidentialResponses: ids.confidentialId },
      ctx,
    );
    await persistEffects(tx, study.key, outcome.effects);
    const saved = await saveParticipantState(tx, row, outcome.state, nowSeconds(ctx));
    await persistReports(tx, { studyKey: study.key, eventType: "LEAVE", reports: outcome.reports });
    await tx
      .delete(confidentialResponses)
      .where(
        and(
          eq(confidentialResponses.studyKey, study.key),
          eq(confidentialResponses.confidentialId, ids.confidentialId),
        ),
      );
    return { assignedSurveys: withStudyKey(saved.assignedSurveys, study.key) };
  });
}
