/** What signed-in participants read of their own study data, as case-backend's participant API serves it. */
export { assertProfilesOfUser } from "./owned-profiles";
export { participantsOfProfiles, participantIdOfProfile, type ProfileParticipant } from "./profile-participants";
export { currentSurveyInfos, submittedSurveyInfos, surveyInfoOf, type SurveyInfo } from "./survey-infos";
export {
  listAssignedSurveysOfProfiles,
  listAssignedSurveysOfTemporaryParticipant,
  type AssignedSurveysOfProfiles,
  type ProfileAssignedSurvey,
  type TemporaryAssignedSurveys,
} from "./assigned-surveys";
export { listSubmissionHistory, type Submission, type SubmissionHistory } from "./submission-history";
export { listStudiesByStatus, listParticipatingStudies, type ParticipatingStudy } from "./studies";
export {
  getActiveStudyForParticipant,
  ownFilter,
  listOwnReports,
  listOwnResponses,
  getOwnLinkingCode,
} from "./own-data";
export { findConfidentialResponses, type ConfidentialResponseRecord } from "./confidential-responses";
