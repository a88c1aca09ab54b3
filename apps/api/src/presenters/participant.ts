import type { AssignedSurvey, ParticipantMessage } from "@studyflow/engine";
import { toEngineState, type ParticipantRow } from "@studyflow/domain";

/** An assigned survey as clients see it: studyKey and profileID always present. */
export type ApiAssignedSurvey = AssignedSurvey & { studyKey: string; profileID: string };

/** The participant as the interface shows it (timestamps in Unix seconds). */
export interface ApiParticipant {
  id: string;
  participantId: string;
  currentStudySession: string;
  modifiedAt: number;
  enteredAt: number;
  studyStatus: string;
  flags: Record<string, string>;
  linkingCodes: Record<string, string>;
  assignedSurveys: AssignedSurvey[];
  lastSubmissions: Record<string, number>;
  messages: ParticipantMessage[];
  hashedAccountID?: string;
  isMainProfile?: boolean;
}

export function presentAssignedSurveys(row: ParticipantRow): ApiAssignedSurvey[] {
  return row.assignedSurveys.map((survey) => ({
    ...survey,
    studyKey: row.studyKey,
    profileID: survey.profileID ?? "",
  }));
}

export function presentParticipant(row: ParticipantRow): ApiParticipant {
  return {
    id: row.id,
    ...toEngineState(row),
    ...(row.hashedAccountId === null ? {} : { hashedAccountID: row.hashedAccountId }),
    ...(row.isMainProfile === null ? {} : { isMainProfile: row.isMainProfile }),
  };
}
