// A survey's contextRules and the context the participant app renders a survey with: the
// participant's flags, the study's variables and the survey's mode, as case-backend's participant
// API builds it (pkg/study, resolveContextRules). Reads only.
import { evaluateExpression } from "./apply-rules";
import type { PrefillProblem } from "./survey-prefill";
import type { EngineEnv, ExpressionArg, ParticipantState, StudyVariable } from "./types";

/** The context of a survey for one participant; study variables as stored (dates in Unix seconds). */
export interface SurveyContext {
  /** Absent when the rules name none (or an empty one). */
  mode?: string;
  participantFlags: Record<string, string>;
  studyVariables: StudyVariable[];
}

export interface SurveyContextOutcome {
  context: SurveyContext;
  /** Parts of the rules that were not used, and why (for the server's log). */
  problems: PrefillProblem[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The mode: a string argument's `str` (any dtype but "exp" reads as one, as in the reference), or
 * an expression evaluated for the participant, which must give a string. The reference refuses
 * expressions ("not supported yet") and fails the request; here the participant's state answers
 * them, through the read-only services the caller passes.
 */
async function modeOf(
  arg: ExpressionArg,
  state: ParticipantState,
  studyKey: string,
  env: EngineEnv,
): Promise<string | { problem: string }> {
  if (arg.dtype !== "exp") return typeof arg.str === "string" ? arg.str : "";
  if (!isObject(arg.exp)) return { problem: "mode expression is missing" };
  const { value, error } = await evaluateExpression(arg.exp, state, { type: "CUSTOM", studyKey }, env);
  if (error !== undefined) return { problem: `mode expression failed: ${error}` };
  if (typeof value !== "string") return { problem: `mode expression gave ${typeof value}, not a string` };
  return value;
}

/**
 * The context of a survey for a participant: flags and every study variable always, the mode when
 * the survey's contextRules give one. `previousResponses` rules are reported and not evaluated, as
 * the reference does not evaluate them either.
 */
export async function resolveSurveyContext(
  contextRules: unknown,
  input: { state: ParticipantState; studyKey: string; variables: readonly StudyVariable[] },
  env: EngineEnv,
): Promise<SurveyContextOutcome> {
  const context: SurveyContext = { participantFlags: { ...input.state.flags }, studyVariables: [...input.variables] };
  const problems: PrefillProblem[] = [];
  if (contextRules === undefined || contextRules === null) return { context, problems };
  if (!isObject(contextRules)) {
    return { context, problems: [{ path: "contextRules", message: "contextRules is not an object" }] };
  }
  const mode = contextRules["mode"];
  if (isObject(mode)) {
    const resolved = await modeOf(mode, input.state, input.studyKey, env);
    if (typeof resolved === "string") {
      if (resolved !== "") context.mode = resolved;
    } else {
      problems.push({ path: "contextRules.mode", message: resolved.problem });
    }
  }
  const previous = contextRules["previousResponses"];
  if (Array.isArray(previous) && previous.length > 0) {
    problems.push({
      path: "contextRules.previousResponses",
      message: "previousResponses rules are not evaluated (case-backend does not evaluate them either)",
    });
  }
  return { context, problems };
}
