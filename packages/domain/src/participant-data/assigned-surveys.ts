import { and, eq } from "drizzle-orm";
import { participants, type Executor, type StoredAssignedSurvey } from "@studyflow/db";
import { NotFound } from "../errors";
import { getActiveStudyForParticipant } from "./own-data";
import { participantsOfProfiles } from "./profile-participants";
import { currentSurveyInfos, type SurveyInfo } from "./survey-infos";

/** An assigned survey with the study and the profile it is assigned to. */
export interface ProfileAssignedSurvey {
  studyKey: string;
  surveyKey: string;
  /** Unix seconds; 0 leaves that end open. */
  validFrom: number;
  validUntil: number;
  category: string;
  profileId: string;
}

export interface AssignedSurveysOfProfiles {
  surveys: ProfileAssignedSurvey[];
  /** One per assigned survey key that has a published version, in the order the keys first occur. */
  surveyInfos: SurveyInfo[];
}

const ACTIVE = "active";

/**
 * The surveys assigned to the active participants of the given profiles in a study (profiles that
 * are no participant there, or no longer an active one, add nothing, as in case-backend), with the
 * infos of their current versions. The caller has checked that the profiles are the user's.
 * @throws NotFound for an unknown study; Conflict for an inactive one.
 */
export async function listAssignedSurveysOfProfiles(
  db: Executor,
  studyKey: string,
  profileIds: readonly string[],
): Promise<AssignedSurveysOfProfiles> {
  const study = await getActiveStudyForParticipant(db, studyKey);
  const found = await participantsOfProfiles(db, study, profileIds);
  const surveys = found
    .filter(({ participant }) => participant.studyStatus === ACTIVE)
    .flatMap(({ profileId, participant }) =>
      participant.assignedSurveys.map((survey: StoredAssignedSurvey) => ({
        studyKey,
        surveyKey: survey.surveyKey,
        validFrom: survey.validFrom,
        validUntil: survey.validUntil,
        category: survey.category,
        profileId,
      })),
    );
  const surveyInfos = await currentSurveyInfos(
    db,
    studyKey,
    surveys.map((survey) => survey.surveyKey),
  );
  return { surveys, surveyInfos };
}

/** A temporary participant's assigned surveys, as its state stores them. */
export interface TemporaryAssignedSurveys {
  surveys: ProfileAssignedSurvey[];
  surveyInfos: SurveyInfo[];
}

/**
 * The surveys assigned to a temporary participant (case-backend's
 * GetAssignedSurveysForTempParticipant): its id, from register, is its only credential, so an
 * unknown id and a participant that is no longer temporary (merged, or an account's) are one
 * NotFound. A temporary participant has no profile: an assignment's profile is empty unless the
 * rules set one.
 * @throws NotFound for an unknown study or participant; Conflict for an inactive study.
 */
export async function listAssignedSurveysOfTemporaryParticipant(
  db: Executor,
  studyKey: string,
  participantId: string,
): Promise<TemporaryAssignedSurveys> {
  const study = await getActiveStudyForParticipant(db, studyKey);
  const [row] = await db
    .select({ studyStatus: participants.studyStatus, assignedSurveys: participants.assignedSurveys })
    .from(participants)
    .where(and(eq(participants.studyKey, study.key), eq(participants.participantId, participantId)))
    .limit(1);
  if (row?.studyStatus !== "temporary") throw new NotFound(`temporary participant not found in study "${studyKey}"`);
  const surveys = row.assignedSurveys.map((survey: StoredAssignedSurvey) => ({
    // case-backend answers the stored study key, empty for assignments its rules made; the signed-in route names the study
    studyKey: survey.studyKey || studyKey,
    surveyKey: survey.surveyKey,
    validFrom: survey.validFrom,
    validUntil: survey.validUntil,
    category: survey.category,
    profileId: survey.profileID ?? "",
  }));
  const surveyInfos = await currentSurveyInfos(
    db,
    studyKey,
    surveys.map((survey) => survey.surveyKey),
  );
  return { surveys, surveyInfos };
}
