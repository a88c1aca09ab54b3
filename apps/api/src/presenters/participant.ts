import { z } from "@hono/zod-openapi";
import { toEngineState, type ParticipantRow } from "@studyflow/domain";

/** An assigned survey as clients see it: studyKey and profileID always present. */
export const assignedSurveySchema = z
  .object({
    studyKey: z.string(),
    surveyKey: z.string(),
    validFrom: z.number().int(),
    validUntil: z.number().int(),
    category: z.string(),
    profileID: z.string(),
  })
  .openapi("AssignedSurvey");

/** The participant as the interface shows it (timestamps in Unix seconds). */
export const participantSchema = z
  .object({
    id: z.string(),
    participantId: z.string(),
    currentStudySession: z.string(),
    modifiedAt: z.number().int().openapi({ description: "Unix seconds" }),
    enteredAt: z.number().int().openapi({ description: "Unix seconds" }),
    studyStatus: z.string().openapi({ example: "active" }),
    flags: z.record(z.string(), z.string()),
    linkingCodes: z.record(z.string(), z.string()),
    assignedSurveys: z.array(assignedSurveySchema),
    lastSubmissions: z.record(z.string(), z.number()).openapi({ description: "survey key → Unix seconds of arrival" }),
    messages: z.array(z.object({ id: z.string(), type: z.string(), scheduledFor: z.number() })),
    hashedAccountID: z.string().optional(),
    isMainProfile: z.boolean().optional(),
  })
  .openapi("Participant");

/** The answer of the participant events: the participant's surveys after the rules. */
export const assignedSurveysEnvelope = z.object({ assignedSurveys: z.array(assignedSurveySchema) });

export type ApiAssignedSurvey = z.infer<typeof assignedSurveySchema>;
export type ApiParticipant = z.infer<typeof participantSchema>;

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
    // the interface's AssignedSurvey everywhere: studyKey and profileID always present
    assignedSurveys: presentAssignedSurveys(row),
    ...(row.hashedAccountId === null ? {} : { hashedAccountID: row.hashedAccountId }),
    ...(row.isMainProfile === null ? {} : { isMainProfile: row.isMainProfile }),
  };
}
