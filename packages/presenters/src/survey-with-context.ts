import { z } from "@hono/zod-openapi";
import { caseDateValue } from "./case-date";
import type { SurveyWithContext } from "@studyflow/domain/survey-context";
import type { StudyVariable, SurveyContext } from "@studyflow/engine";
import { caseSurveySchema, presentSurveyDocument } from "./survey";

/** Fields of the stored Survey that only the server reads: case-backend leaves them out of what participants get. */
const SERVER_ONLY_FIELDS = ["contextRules", "prefillRules"];

const studyVariableValueSchema = z.object({
  type: z.string().openapi({ example: "int" }),
  value: z
    .union([z.string(), z.number(), z.boolean()])
    .openapi({ description: "as the type says; a date as an RFC 3339 instant, as case-backend writes it" }),
});

const surveyContextSchema = z
  .object({
    mode: z.string().optional().openapi({ description: "from the survey's contextRules.mode; absent when none" }),
    participantFlags: z
      .record(z.string(), z.string())
      .optional()
      .openapi({ description: "absent when there are none" }),
    studyVariables: z
      .record(z.string(), studyVariableValueSchema)
      .optional()
      .openapi({ description: "every study variable by key; absent when the study has none" }),
  })
  .openapi("SurveyContext");

const prefillSchema = z
  .object({
    responses: z.array(z.record(z.string(), z.unknown())).openapi({
      description: "item responses (SurveyItemResponse) to start the form with",
    }),
  })
  .openapi("SurveyPrefill");

/** case-backend's `{surveyWithContext: {survey, context?, prefill?}}`. */
export const surveyWithContextEnvelope = z
  .object({
    surveyWithContext: z.object({
      survey: caseSurveySchema,
      context: surveyContextSchema.optional().openapi({ description: "absent when no participant opens the survey" }),
      prefill: prefillSchema.optional().openapi({ description: "absent when the survey has no prefillRules" }),
    }),
  })
  .openapi("SurveyWithContextEnvelope");

/** A date variable as Go's time.Time marshals it: RFC 3339, no fraction for whole seconds. */
function variableValue(variable: StudyVariable): string | number | boolean {
  return variable.type === "date" ? caseDateValue(variable.value) : variable.value;
}

function presentContext(context: SurveyContext): z.infer<typeof surveyContextSchema> {
  // Go's omitempty: empty maps and an empty mode are left out
  return {
    ...(context.mode ? { mode: context.mode } : {}),
    ...(Object.keys(context.participantFlags).length > 0 ? { participantFlags: context.participantFlags } : {}),
    ...(context.studyVariables.length > 0
      ? {
          studyVariables: Object.fromEntries(
            context.studyVariables.map((variable) => [
              variable.key,
              { type: variable.type, value: variableValue(variable) },
            ]),
          ),
        }
      : {}),
  };
}

export function presentSurveyWithContext(result: SurveyWithContext): z.infer<typeof surveyWithContextEnvelope> {
  const survey = Object.fromEntries(
    Object.entries(presentSurveyDocument(result.version)).filter(([field]) => !SERVER_ONLY_FIELDS.includes(field)),
  );
  return {
    surveyWithContext: {
      survey,
      ...(result.context ? { context: presentContext(result.context) } : {}),
      ...(result.prefill
        ? { prefill: { responses: result.prefill.responses as unknown as Record<string, unknown>[] } }
        : {}),
    },
  };
}
