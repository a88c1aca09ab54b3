import { z } from "@hono/zod-openapi";
import type { ProfileAssignedSurvey, Submission, SurveyInfo } from "@studyflow/domain/participant-data";
import type { ParticipantRow } from "@studyflow/domain/participants";

const localisedTexts = z
  .array(z.unknown())
  .openapi({ description: "CASE localised texts ({code, parts}) in every language of the survey definition" });

/** What a participant app shows of a survey before opening it (CASE's SurveyInfo). */
export const caseSurveyInfoSchema = z
  .object({
    surveyKey: z.string(),
    studyKey: z.string(),
    name: localisedTexts,
    description: localisedTexts,
    typicalDuration: localisedTexts,
    versionID: z.string(),
  })
  .openapi("CaseSurveyInfo");

export function presentCaseSurveyInfo(studyKey: string, info: SurveyInfo): z.infer<typeof caseSurveyInfoSchema> {
  return {
    surveyKey: info.surveyKey,
    studyKey,
    name: info.name,
    description: info.description,
    typicalDuration: info.typicalDuration,
    versionID: info.versionId,
  };
}

export const caseAssignedSurveySchema = z
  .object({
    studyKey: z.string(),
    surveyKey: z.string(),
    validFrom: z.number().int().openapi({ description: "Unix seconds; 0 = from any time" }),
    validUntil: z.number().int().openapi({ description: "Unix seconds; 0 = open-ended" }),
    category: z.string().openapi({ example: "prio" }),
    profileID: z.string(),
  })
  .openapi("CaseAssignedSurvey");

export function presentCaseAssignedSurvey(survey: ProfileAssignedSurvey): z.infer<typeof caseAssignedSurveySchema> {
  return {
    studyKey: survey.studyKey,
    surveyKey: survey.surveyKey,
    validFrom: survey.validFrom,
    validUntil: survey.validUntil,
    category: survey.category,
    profileID: survey.profileId,
  };
}

export const caseSubmissionSchema = z
  .object({
    profileID: z.string(),
    timestamp: z.number().int().openapi({ description: "when the response arrived, Unix seconds" }),
    surveyKey: z.string(),
    versionID: z.string(),
  })
  .openapi("CaseSubmission");

export function presentCaseSubmission(submission: Submission): z.infer<typeof caseSubmissionSchema> {
  return {
    profileID: submission.profileId,
    timestamp: submission.timestamp,
    surveyKey: submission.surveyKey,
    versionID: submission.versionId,
  };
}

/**
 * The participant's own state as case-backend's participant-state shows it: linking codes are
 * never listed (`null`; one is read by its key through linking-code), nor the hashed account id.
 */
export const caseParticipantStateSchema = z
  .object({
    participantId: z.string().openapi({ description: "the profile's pseudonymous id in the study" }),
    currentStudySession: z.string(),
    modifiedAt: z.number().int(),
    enteredAt: z.number().int(),
    studyStatus: z.string().openapi({ example: "active" }),
    flags: z.record(z.string(), z.string()),
    linkingCodes: z.null(),
    assignedSurveys: z.array(caseAssignedSurveySchema),
    lastSubmissions: z.record(z.string(), z.number().int()),
    messages: z.array(z.object({ id: z.string(), type: z.string(), scheduledFor: z.number().int() })),
  })
  .openapi("CaseParticipantState");

export function presentCaseParticipantState(row: ParticipantRow): z.infer<typeof caseParticipantStateSchema> {
  return {
    participantId: row.participantId,
    currentStudySession: row.currentStudySession,
    modifiedAt: row.modifiedAt,
    enteredAt: row.enteredAt,
    studyStatus: row.studyStatus,
    flags: row.flags,
    linkingCodes: null,
    assignedSurveys: row.assignedSurveys.map((survey) => ({
      studyKey: survey.studyKey ?? "",
      surveyKey: survey.surveyKey,
      validFrom: survey.validFrom,
      validUntil: survey.validUntil,
      category: survey.category,
      profileID: survey.profileID ?? "",
    })),
    lastSubmissions: row.lastSubmissions,
    messages: row.messages.map((message) => ({
      id: message.id,
      type: message.type,
      scheduledFor: message.scheduledFor,
    })),
  };
}
