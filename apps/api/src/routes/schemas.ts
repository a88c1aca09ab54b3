import { z } from "@hono/zod-openapi";

export const errorSchema = z.object({ error: z.string() }).openapi("Error");
export const messageSchema = z.object({ message: z.string() }).openapi("Message");

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const errorResponse = (description: string) => jsonContent(errorSchema, description);

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  ...(description ? { description } : {}),
  content: { "application/json": { schema } },
});

/** The error answers every authenticated route can give, besides its own. */
export const authErrors = {
  401: errorResponse("missing, malformed, expired or wrong-type token"),
  403: errorResponse("the token's subject lacks the right for this resource"),
};

export const MANAGEMENT_SECURITY = [{ managementBearer: [] }];
export const PARTICIPANT_SECURITY = [{ participantBearer: [] }];

/** Keys of studies, surveys and the like: printable, bounded. */
export const keyString = (name: string) =>
  z
    .string()
    .min(1, `${name} must not be empty`)
    .max(200, `${name} is longer than 200 characters`)
    .regex(/^[^\s/?#]+$/, `${name} must not contain spaces, '/', '?' or '#'`);

export const studyKeyParam = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" }, example: "covid-cohort" }),
});

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
    assignedSurveys: z.array(
      z.object({
        surveyKey: z.string(),
        validFrom: z.number(),
        validUntil: z.number(),
        category: z.string(),
        studyKey: z.string().optional(),
        profileID: z.string().optional(),
      }),
    ),
    lastSubmissions: z.record(z.string(), z.number()).openapi({ description: "survey key → Unix seconds of arrival" }),
    messages: z.array(z.object({ id: z.string(), type: z.string(), scheduledFor: z.number() })),
    hashedAccountID: z.string().optional(),
    isMainProfile: z.boolean().optional(),
  })
  .openapi("Participant");

export const taskSchema = z
  .object({
    id: z.string(),
    createdAt: z.string().openapi({ format: "date-time" }),
    createdBy: z.string(),
    updatedAt: z.string().openapi({ format: "date-time" }),
    status: z.enum(["queued", "in_progress", "completed", "failed", "canceled"]),
    targetCount: z.number().int(),
    processedCount: z.number().int(),
    resultFile: z.string(),
    fileType: z.string(),
    error: z.string(),
  })
  .openapi("Task");

export const taskEnvelope = z.object({ task: taskSchema });

export const assignedSurveysEnvelope = z.object({ assignedSurveys: z.array(assignedSurveySchema) });

export const profileIdField = z
  .string()
  .min(1, "profileID must not be empty")
  .max(200, "profileID is longer than 200 characters");
