// UPDATE_STUDY_VARIABLE_*: the variable must exist and be declared with the action's type (the
// reference wrote any value into any variable).
import type { EvalContext } from "../eval-context";
import { reject } from "../eval-context";
import { finiteInteger, finiteNumber, finiteTimestamp } from "../finite-numbers";
import type { ArgSpec } from "../function-spec";
import { NO_PARTICIPANT_FIELDS, actionFamily, boolArg, numArg, strArg } from "../function-spec";
import type { StudyVariable } from "../types";

const VALUE_ERROR = "could not parse value";

/** The value to store, or the failure message. */
type Convert = (value: unknown) => string | number | boolean | { error: string };

function variableUpdater(
  name: string,
  type: StudyVariable["type"],
  valueArg: ArgSpec,
  convert: Convert,
  summaryNote = "",
) {
  return {
    name,
    summary: `sets a study variable declared "${type}"${summaryNote}`,
    usesServices: true,
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [strArg("key", "could not parse variableKey"), valueArg],
    perform: async (ctx: EvalContext, [key, raw]: unknown[]) => {
      // checked before the ports are asked anything
      const value = convert(raw);
      if (typeof value === "object") return reject(ctx, value.error);
      const variable = await ctx.services.getStudyVariable(key as string);
      if (!variable) return reject(ctx, `variable ${JSON.stringify(key)} not found`);
      if (variable.type !== type)
        return reject(ctx, `variable ${JSON.stringify(key)} is declared "${variable.type}", not "${type}"`);
      await ctx.services.updateStudyVariable(key as string, type, value);
      return true;
    },
  };
}

const same = (v: unknown) => v as string | number | boolean;
/** A checked number, or the failure message wrapped so it is not mistaken for a string value. */
const checked =
  (check: (value: number, what: string) => number | string): Convert =>
  (v) => {
    const result = check(v as number, "value");
    return typeof result === "string" ? { error: result } : result;
  };
const SAFE_INTEGER = " (value truncated to an integer; non-finite or beyond ±(2^53 − 1) is an error)";

export const studyVariableActions = actionFamily("study variables", [
  variableUpdater("UPDATE_STUDY_VARIABLE_BOOLEAN", "boolean", boolArg("value", VALUE_ERROR), same),
  variableUpdater(
    "UPDATE_STUDY_VARIABLE_INT",
    "int",
    numArg("value", VALUE_ERROR),
    checked(finiteInteger),
    SAFE_INTEGER,
  ),
  variableUpdater(
    "UPDATE_STUDY_VARIABLE_FLOAT",
    "float",
    numArg("value", VALUE_ERROR),
    checked(finiteNumber),
    " (non-finite is an error)",
  ),
  variableUpdater("UPDATE_STUDY_VARIABLE_STRING", "string", strArg("value", VALUE_ERROR), same),
  variableUpdater(
    "UPDATE_STUDY_VARIABLE_DATE",
    "date",
    numArg("value", VALUE_ERROR),
    checked(finiteTimestamp),
    " (Unix seconds, truncated; non-finite or beyond ±(2^53 − 1) is an error)",
  ),
]);
