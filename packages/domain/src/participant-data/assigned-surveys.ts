import type { StoredAssignedSurvey } from "@studyflow/db";
import type { Executor } from "@studyflow/db";
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
