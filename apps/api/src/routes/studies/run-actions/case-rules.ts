import { z } from "@hono/zod-openapi";
import { validateRules } from "@studyflow/engine";
import { invalidRulesError } from "@studyflow/domain/rules";
import { MAX_RULES, keyString } from "../../schemas";

export const expressionSchema = z
  .object({ name: z.string() })
  .passthrough()
  .openapi("Expression", { description: "A CASE study-engine expression: {name, data?: ExpressionArg[]}" });

/** `rules` of every run-actions body: CASE study-engine expressions, checked by the engine's validator after zod. */
export const rulesField = z.array(expressionSchema).max(MAX_RULES, `at most ${MAX_RULES} rules`);

/** 9999-12-31T23:59:59Z: the last second a stored time takes (a larger bound is refused, not failed on). */
const LAST_UNIX_SECOND = 253_402_300_799;

/** The previous-responses bodies (case-admin sends `from`/`to` as Unix seconds, absent for no bound). */
export const previousResponsesBody = z.object({
  rules: rulesField,
  surveyKeys: z
    .array(keyString("surveyKeys[]"))
    .max(1000, "at most 1000 survey keys")
    .nullish()
    .openapi({ description: "only responses to these surveys; absent or empty: every survey" }),
  from: z
    .number()
    .nonnegative("from must not be negative")
    .max(LAST_UNIX_SECOND, "from is beyond the year 9999")
    .nullish()
    .openapi({ description: "only responses that arrived after this Unix time (seconds); 0 or absent: no bound" }),
  to: z
    .number()
    .nonnegative("to must not be negative")
    .max(LAST_UNIX_SECOND, "to is beyond the year 9999")
    .nullish()
    .openapi({ description: "only responses that arrived before this Unix time (seconds); 0 or absent: no bound" }),
});

/** The previous-responses selection of a validated body, as the domain takes it (whole seconds). */
export function selectionOf(body: z.infer<typeof previousResponsesBody>) {
  return {
    surveyKeys: body.surveyKeys ?? [],
    from: Math.floor(body.from ?? 0),
    to: Math.floor(body.to ?? 0),
  };
}

/** What a synchronous run on one participant answers (case-backend's shape). */
export const participantRunResultSchema = z
  .object({
    participantCount: z.number().int().openapi({ description: "1, or 0 when the id names no participant" }),
    duration: z.number().int().openapi({ description: "whole seconds the run took" }),
    ruleResults: z
      .array(z.number().int())
      .openapi({ description: "per rule, the participants whose state it changed (0 or 1)" }),
  })
  .openapi("RunActionsParticipantResult");

/**
 * The rules, validated by the engine as the task routes validate them: 400 naming the first
 * problems' JSON paths, before anything is written.
 */
export function validatedRules(rules: unknown[]): unknown[] {
  const validation = validateRules(rules);
  if (validation.ok) return validation.rules;
  throw invalidRulesError(validation.errors, { subject: "invalid rules" });
}
