import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { profiles, rawClientOf, studies, surveyVersions, type Database, type Executor } from "@studyflow/db";
import { forgetCached } from "../cache/read-cache";
import { Invalid } from "../errors";
import { inEventTransaction, type DomainContext, type EventContext } from "../events/event-runner";
import { nowSeconds } from "../foundation/clock";
import { leaveLockedParticipant } from "../events/leave-study";
import type { RuleFailureRecord } from "../events/rule-failures";
import { storeResponse, type ArrivedResponse } from "../events/store-response";
import { SUBMITTED_BY_PARTICIPANT, type SubmittedResponse } from "../events/submit-response";
import { participantIdsInStudy } from "../participants/participant-ids";
import {
  lockParticipant,
  lockParticipantForEvent,
  saveParticipantState,
  toEngineState,
  type ParticipantRow,
} from "../participants/participant-repository";
import { profileOfUser } from "./profiles";

/** CASE's status of a participant whose profile or account is gone: it takes part in nothing again. */
const ACCOUNT_DELETED_STATUS = "accountDeleted";

export interface RemoveProfileInput {
  userId: string;
  profileId: string;
  /** The app's exit survey, stored before the participant leaves (see storeExitSurvey). */
  exitSurveyResponse?: SubmittedResponse | null;
}

export interface RemovedProfile {
  /** The studies whose participant of the profile left, with the state it was left in. */
  participants: ParticipantRow[];
  /** Studies that kept the exit survey response. */
  exitSurveyStoredIn: string[];
  warnings: RuleFailureRecord[];
}

type StudyOfProfile = typeof studies.$inferSelect;

/**
 * Whether a study takes the exit survey: case-backend stores it in its system default studies;
 * studyflow also in a study that has a survey of the response's key (a deployment that marks no
 * default study still keeps the answers).
 */
async function takesExitSurvey(tx: Executor, study: StudyOfProfile, surveyKey: string): Promise<boolean> {
  if (study.props.systemDefaultStudy === true) return true;
  const studyKey = study.key;
  const [found] = await tx
    .select({ id: surveyVersions.id })
    .from(surveyVersions)
    .where(and(eq(surveyVersions.studyKey, studyKey), eq(surveyVersions.surveyKey, surveyKey)))
    .limit(1);
  return found !== undefined;
}

/**
 * The exit survey as case-backend stores it when a profile goes: the response only, no SUBMIT
 * rules (the participant is leaving), before the LEAVE rules run.
 */
async function storeExitSurvey(
  tx: Executor,
  study: StudyOfProfile,
  row: ParticipantRow,
  confidentialId: string,
  response: SubmittedResponse,
  ctx: EventContext,
): Promise<void> {
  const arrived: ArrivedResponse = {
    id: randomUUID(),
    key: response.key,
    participantId: row.participantId,
    versionId: response.versionId ?? "",
    openedAt: response.openedAt ?? 0,
    submittedAt: response.submittedAt ?? 0,
    arrivedAt: nowSeconds(ctx),
    responses: response.responses ?? [],
    context: { ...response.context, submittedBy: SUBMITTED_BY_PARTICIPANT },
  };
  await storeResponse(tx, study.key, arrived, { confidentialId }, row.currentStudySession);
}

/**
 * An inactive study runs no rules: its participant of the removed profile is marked gone and its
 * confidential responses removed, as the LEAVE sequence would, without the LEAVE rules.
 */
async function retireInInactiveStudy(
  tx: Executor,
  study: StudyOfProfile,
  participantId: string,
  confidentialId: string,
  ctx: EventContext,
): Promise<ParticipantRow | null> {
  const row = await lockParticipant(tx, study.key, participantId);
  if (!row || row.studyStatus === ACCOUNT_DELETED_STATUS) return null;
  const saved = await saveParticipantState(
    tx,
    row,
    { ...toEngineState(row), studyStatus: ACCOUNT_DELETED_STATUS },
    nowSeconds(ctx),
  );
  await rawClientOf(tx)`delete from confidential_responses
    where study_key = ${study.key} and confidential_id = ${confidentialId}`;
  return saved;
}

/**
 * Removes one of the user's profiles, as case-backend's profile removal does, in one transaction:
 * in every study where the profile takes part, the exit survey (if given) is stored, the
 * participant leaves through the LEAVE sequence (its rules run, its confidential responses go)
 * and ends as `accountDeleted`; then the profile is deleted. A strict study whose LEAVE rules fail
 * rejects the whole removal (nothing changes). The main profile cannot be removed.
 */
export async function removeProfile(
  db: Database,
  input: RemoveProfileInput,
  ctx: DomainContext,
): Promise<RemovedProfile> {
  const removed = await inEventTransaction(db, ctx, async (tx, eventCtx) => {
    // Locked first: a concurrent removal of the same profile waits here, then finds it gone.
    const profile = await profileOfUser(tx, input.userId, input.profileId, true);
    if (profile.mainProfile) throw new Invalid("profileId: the main profile cannot be removed");

    const left: ParticipantRow[] = [];
    const exitSurveyStoredIn: string[] = [];
    const exitSurvey = input.exitSurveyResponse ?? null;
    for (const study of await tx.select().from(studies).orderBy(studies.key)) {
      const ids = participantIdsInStudy(study, profile.id);
      if (study.status !== "active") {
        const retired = await retireInInactiveStudy(tx, study, ids.participantId, ids.confidentialId, eventCtx);
        if (retired) left.push(retired);
        continue;
      }
      const row = await lockParticipantForEvent(tx, study.key, ids.participantId);
      if (!row || row.studyStatus === ACCOUNT_DELETED_STATUS) continue;
      if (exitSurvey && (await takesExitSurvey(tx, study, exitSurvey.key))) {
        await storeExitSurvey(tx, study, row, ids.confidentialId, exitSurvey, eventCtx);
        exitSurveyStoredIn.push(study.key);
      }
      left.push(
        await leaveLockedParticipant(
          tx,
          { study, row, confidentialId: ids.confidentialId, finalStatus: ACCOUNT_DELETED_STATUS },
          eventCtx,
        ),
      );
    }
    await tx.delete(profiles).where(eq(profiles.id, profile.id));
    return { participants: left, exitSurveyStoredIn, warnings: eventCtx.failures };
  });
  // this process stops accepting the profile at once; the others when the deletion is announced
  forgetCached(db, "profile", input.profileId);
  return removed;
}
