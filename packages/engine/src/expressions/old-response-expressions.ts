// checkConditionForOldResponses: evaluates a condition against the participant's stored responses.
import type { CompiledArg, EvalContext } from "../eval-context";
import { FAILED, createContext, fail, propagate } from "../eval-context";
import { anyArg, expressionFamily, optional, strArg } from "../function-spec";
import { goTypeName } from "../go-compatible-format";
import type { StudyEvent, SurveyResponse } from "../types";

/** The reference reads at most this many of the most recent responses. */
const RESPONSE_LIMIT = 100;

type Mode = { kind: "all" } | { kind: "any" } | { kind: "count"; n: number } | { kind: "never" };

function modeOf(value: unknown): Mode | string {
  if (value === undefined) return { kind: "all" };
  if (typeof value === "number") return { kind: "count", n: Math.trunc(value) };
  if (typeof value !== "string") return `type unknown ${goTypeName(value)}`;
  if (value === "all" || value === "any") return { kind: value };
  // the reference stores the string as the mode; "count" then means "at least one", others never match
  if (value === "count") return { kind: "count", n: 1 };
  return { kind: "never" };
}

/** The condition sees only the old response: no event type, no study key, no merge participant. */
function oldResponseContext(ctx: EvalContext, response: SurveyResponse): EvalContext {
  const event = { type: "", studyKey: "", response } as unknown as StudyEvent;
  return createContext(ctx.state, event, ctx.env);
}

async function evaluateCondition(
  ctx: EvalContext,
  condition: CompiledArg,
  response: SurveyResponse,
): Promise<boolean | typeof FAILED> {
  if (condition.role !== "expression") return false;
  const child = oldResponseContext(ctx, response);
  const value: unknown = condition.isAsync ? await condition.expression.run(child) : condition.expression.run(child);
  if (value === FAILED) {
    ctx.error = child.error;
    return propagate(ctx);
  }
  // the reference asserted a boolean here and crashed otherwise; anything else counts as false
  return value === true;
}

export const oldResponseExpressions = expressionFamily("old responses", [
  {
    name: "checkConditionForOldResponses",
    summary:
      'condition (dtype "exp") over the ≤100 most recent responses: mode "all" (default; needs ≥1 response), "any", or a count N; optional surveyKey, since, until',
    returns: "bool",
    usesServices: true,
    // participantId selects the old responses; the condition sees the state too, but as an argument it declares its own
    participantFields: { reads: ["participantId"], writes: [] },
    args: [
      anyArg("condition", { expressionOnly: true, deferred: true }),
      optional(anyArg("mode")),
      optional(strArg("surveyKey")),
      optional(anyArg("since")),
      optional(anyArg("until")),
    ],
    evaluate: async (ctx, args, compiled) => {
      if (!ctx.event.studyKey) return fail(ctx, "checkConditionForOldResponses: study key missing from context");
      const mode = modeOf(args[1]);
      if (typeof mode === "string") return fail(ctx, mode);
      const surveyKey = typeof args[2] === "string" ? args[2] : "";
      const since = typeof args[3] === "number" ? Math.trunc(args[3]) : 0;
      const until = typeof args[4] === "number" ? Math.trunc(args[4]) : 0;
      const responses = await ctx.services.findOldResponses({
        participantId: ctx.state.participantId,
        ...(surveyKey !== "" ? { surveyKey } : {}),
        ...(since > 0 ? { since } : {}),
        ...(until > 0 ? { until } : {}),
        limit: RESPONSE_LIMIT,
      });
      const condition = compiled[0];
      if (!condition || !Array.isArray(responses)) return false;
      let trueCount = 0;
      let evaluated = 0;
      for (const response of responses) {
        const result = await evaluateCondition(ctx, condition, response);
        if (result === FAILED) return FAILED;
        evaluated++;
        switch (mode.kind) {
          case "all":
            if (!result) return false;
            break;
          case "any":
            if (result) return true;
            break;
          case "count":
            if (result && ++trueCount >= mode.n) return true;
            break;
          case "never":
            break;
        }
      }
      return mode.kind === "all" && evaluated > 0;
    },
  },
]);
