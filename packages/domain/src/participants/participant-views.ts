import { and, eq, inArray } from "drizzle-orm";
import { participants, studies, type Executor, type StoredAssignedSurvey, type StudyProps } from "@studyflow/db";
import { Forbidden, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";
import { currentSurveyVersion, type SurveyVersion } from "../surveys/survey-versions";
import { participantIdsInStudy } from "./participant-ids";
import type { ParticipantRow } from "./participant-repository";

/** What signed-in participants read about themselves. None of it locks or changes anything. */

/** A study a profile takes part in, as its participant sees it. */
export interface ProfileStudy {
  studyKey: string;
  /** The participant's status in the study (active, exited, …). */
  participantStatus: string;
  /** Unix seconds. */
  enteredAt: number;
  props: StudyProps;
}

/**
 * The studies a profile takes part in, whatever its status there, by study key. Participant ids
 * come from the profile id through each study's secret and id mapping method, so they are derived
 * per study and looked up together; no table maps a profile to its studies.
 */
export async function listProfileStudies(db: Executor, profileId: string): Promise<ProfileStudy[]> {
  const all = await db
    .select({
      key: studies.key,
      secret: studies.secret,
      idMappingMethod: studies.idMappingMethod,
      props: studies.props,
    })
    .from(studies)
    .orderBy(studies.key);
  if (all.length === 0) return [];
  const idOf = new Map(all.map((study) => [study.key, participantIdsInStudy(study, profileId).participantId]));
  const rows = await db
    .select({
      studyKey: participants.studyKey,
      participantId: participants.participantId,
      studyStatus: participants.studyStatus,
      enteredAt: participants.enteredAt,
    })
    .from(participants)
    .where(
      and(inArray(participants.studyKey, [...idOf.keys()]), inArray(participants.participantId, [...idOf.values()])),
    );
  // the two lists match every pairing; only a study's own id is this profile's participant there
  const found = new Map(
    rows.filter((row) => idOf.get(row.studyKey) === row.participantId).map((row) => [row.studyKey, row]),
  );
  return all.flatMap((study) => {
    const row = found.get(study.key);
    return row
      ? [{ studyKey: study.key, participantStatus: row.studyStatus, enteredAt: row.enteredAt, props: study.props }]
      : [];
  });
}

/** The participant of a profile in a study. @throws NotFound for an unknown study or a profile that is no participant. */
export async function getProfileParticipant(
  db: Executor,
  studyKey: string,
  profileId: string,
): Promise<ParticipantRow> {
  const study = await getStudy(db, studyKey);
  const { participantId } = participantIdsInStudy(study, profileId);
  const [row] = await db
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)))
    .limit(1);
  if (!row) throw new NotFound(`profile is not a participant of study "${studyKey}"`);
  return row;
}

/** An assignment is valid from validFrom until validUntil, inclusive; 0 leaves that end open. */
export function isAssignmentValid(assignment: StoredAssignedSurvey, nowSeconds: number): boolean {
  return (
    (assignment.validFrom === 0 || assignment.validFrom <= nowSeconds) &&
    (assignment.validUntil === 0 || nowSeconds <= assignment.validUntil)
  );
}

function describeInstant(seconds: number): string {
  const at = new Date(seconds * 1000);
  return Number.isNaN(at.getTime()) ? `${seconds} (Unix seconds)` : at.toISOString();
}

/**
 * The current version of a survey for the participant of a profile: the survey must be assigned
 * to it and valid now (Forbidden otherwise, checked before anything about the survey is told),
 * and have a published version (NotFound otherwise).
 */
export async function getAssignedSurveyVersion(
  db: Executor,
  input: { studyKey: string; profileId: string; surveyKey: string; nowSeconds: number },
): Promise<SurveyVersion> {
  const participant = await getProfileParticipant(db, input.studyKey, input.profileId);
  const assignments = participant.assignedSurveys.filter((survey) => survey.surveyKey === input.surveyKey);
  if (assignments.length === 0) {
    throw new Forbidden(`survey "${input.surveyKey}" is not assigned to this participant`);
  }
  if (!assignments.some((assignment) => isAssignmentValid(assignment, input.nowSeconds))) {
    const [first] = assignments;
    const window = first
      ? ` (valid from ${first.validFrom === 0 ? "any time" : describeInstant(first.validFrom)} until ${
          first.validUntil === 0 ? "any time" : describeInstant(first.validUntil)
        })`
      : "";
    throw new Forbidden(`survey "${input.surveyKey}" is assigned to this participant but not valid now${window}`);
  }
  const version = await currentSurveyVersion(db, input.studyKey, input.surveyKey);
  if (!version) throw new NotFound(`survey "${input.surveyKey}" has no published version in study "${input.studyKey}"`);
  return version;
}
