import { z } from "@hono/zod-openapi";

/** Request and response pieces several resources share; response shapes of domain objects live with their presenters. */

export const messageSchema = z.object({ message: z.string() }).openapi("Message");

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  ...(description ? { description } : {}),
  content: { "application/json": { schema } },
});

/** A management token, or a service account's API key (either one, never both). */
export const MANAGEMENT_SECURITY: Record<string, string[]>[] = [{ managementBearer: [] }, { serviceApiKey: [] }];
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

export const profileIdField = z
  .string()
  .min(1, "profileID must not be empty")
  .max(200, "profileID is longer than 200 characters");

/** The engine's ResponseItem: one answer, or a group of them. */
interface ResponseItem {
  key: string;
  value?: string;
  dtype?: string;
  items?: ResponseItem[];
}

// A named component, so the OpenAPI generator can refer to the recursive shape instead of expanding it forever.
const responseItem: z.ZodType<ResponseItem> = z
  .lazy(() =>
    z.object({
      key: z.string(),
      value: z.string().optional(),
      dtype: z.string().optional(),
      items: z.array(responseItem).optional(),
    }),
  )
  .openapi("ResponseItem");

const surveyItemResponse = z.object({
  key: z.string().min(1, "response item key must not be empty"),
  meta: z.unknown().optional(),
  response: responseItem.optional(),
  confidentialMode: z.string().optional(),
  mapToKey: z.string().optional(),
});

const unixSeconds = z.number().int().min(0).max(253_402_300_799);

/** A survey response as participant apps and researchers submit it (the CASE SurveyResponse). */
export const submittedResponseSchema = z
  .object({
    key: keyString("key").openapi({ description: "survey key", example: "intake" }),
    versionId: z.string().max(200).optional().openapi({
      description:
        "the survey version answered; a non-empty one must name an uploaded version (see the study's unknownSurveyVersion)",
    }),
    openedAt: unixSeconds.optional(),
    submittedAt: unixSeconds.optional(),
    responses: z.array(surveyItemResponse).max(10_000).optional(),
    context: z.record(z.string(), z.string()).optional(),
  })
  .openapi("SurveyResponse");

export const surveyKeyField = keyString("surveyKey").openapi({
  param: { name: "surveyKey", in: "path" },
  example: "intake",
});

/** `?profileID=` of the participant's reads: which of the signed-in user's profiles is asking. */
export const profileIdQuery = z.object({
  profileID: profileIdField.openapi({ param: { name: "profileID", in: "query" } }),
});

/** A study's rule set is small; this bound stops a body from keeping the validator busy. */
export const MAX_RULES = 1_000;

/** `{rules}`: a rule set as the engine's validator takes it (the validator checks each rule). */
export const ruleSetBody = z.object({
  rules: z
    .array(z.unknown())
    .max(MAX_RULES, `at most ${MAX_RULES} rules`)
    .openapi({ description: "rule expressions in the CASE study-engine JSON form: {name, data?}" }),
});
