import { z } from "@hono/zod-openapi";
import { toEngineState, type ParticipantRow, type ProfileStudy } from "@studyflow/domain/participants";

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

/** A study a profile takes part in, as the participant's app lists it. */
export const participantStudySchema = z
  .object({
    studyKey: z.string(),
    participantStatus: z.string().openapi({ example: "active" }),
    enteredAt: z.number().int().openapi({ description: "Unix seconds" }),
    props: z.object({
      name: z
        .record(z.string(), z.string())
        .openapi({ description: "per language code", example: { en: "Flu watch" } }),
      description: z.record(z.string(), z.string()),
      tags: z.array(z.string()),
      startDate: z.string().optional().openapi({ description: "ISO date" }),
    }),
  })
  .openapi("ParticipantStudy");

export function presentProfileStudy(study: ProfileStudy): z.infer<typeof participantStudySchema> {
  return {
    studyKey: study.studyKey,
    participantStatus: study.participantStatus,
    enteredAt: study.enteredAt,
    props: {
      name: study.props.name ?? {},
      description: study.props.description ?? {},
      tags: study.props.tags ?? [],
      ...(study.props.startDate === undefined ? {} : { startDate: study.props.startDate }),
    },
  };
}

/**
 * The participant's own state as the participant sees it: what its app needs to show and decide
 * (status, surveys, flags the rules set for it, when it last submitted what). Left out: the
 * pseudonymous participant id and the hashed account id (the data researchers analyse is keyed by
 * them; a copy in the person's hands would tie that data back to them), linking codes (keys into
 * other systems, e.g. lab kits or panels, that researchers hold), scheduled messages and the
 * study session (the service's own bookkeeping).
 */
export const ownParticipantSchema = z
  .object({
    studyKey: z.string(),
    studyStatus: z.string().openapi({ example: "active" }),
    enteredAt: z.number().int().openapi({ description: "Unix seconds" }),
    assignedSurveys: z.array(assignedSurveySchema),
    flags: z.record(z.string(), z.string()),
    lastSubmissions: z.record(z.string(), z.number()).openapi({ description: "survey key → Unix seconds of arrival" }),
  })
  .openapi("OwnParticipantState");

/** As the reference answers a participant: every assigned survey names the study and the asking profile. */
export function presentOwnParticipant(row: ParticipantRow, profileId: string): z.infer<typeof ownParticipantSchema> {
  return {
    studyKey: row.studyKey,
    studyStatus: row.studyStatus,
    enteredAt: row.enteredAt,
    assignedSurveys: presentAssignedSurveys(row).map((survey) => ({ ...survey, profileID: profileId })),
    flags: row.flags,
    lastSubmissions: row.lastSubmissions,
  };
}
