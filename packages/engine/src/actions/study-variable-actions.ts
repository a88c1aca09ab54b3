// UPDATE_STUDY_VARIABLE_*: the variable must exist and be declared with the action's type (the
// reference wrote any value into any variable).
import type { EvalContext } from "../eval-context";
import { reject } from "../eval-context";
import type { ArgSpec } from "../function-spec";
import { NO_PARTICIPANT_FIELDS, actionFamily, boolArg, numArg, strArg } from "../function-spec";
import type { StudyVariable } from "../types";

const VALUE_ERROR = "could not parse value";

function variableUpdater(
  name: string,
  type: StudyVariable["type"],
  valueArg: ArgSpec,
  convert: (value: unknown) => string | number | boolean,
) {
  return {
    name,
    summary: `sets a study variable declared "${type}"${type === "int" || type === "date" ? " (value truncated to an integer)" : ""}`,
    usesServices: true,
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [strArg("key", "could not parse variableKey"), valueArg],
    perform: async (ctx: EvalContext, [key, value]: unknown[]) => {
      const variable = await ctx.services.getStudyVariable(key as string);
      if (!variable) return reject(ctx, `variable ${JSON.stringify(key)} not found`);
      if (variable.type !== type)
        return reject(ctx, `variable ${JSON.stringify(key)} is declared "${variable.type}", not "${type}"`);
      await ctx.services.updateStudyVariable(key as string, type, convert(value));
      return true;
    },
  };
}

const same = (v: unknown) => v as string | number | boolean;
const truncated = (v: unknown) => Math.trunc(v as number);

export const studyVariableActions = actionFamily("study variables", [
  variableUpdater("UPDATE_STUDY_VARIABLE_BOOLEAN", "boolean", boolArg("value", VALUE_ERROR), same),
  variableUpdater("UPDATE_STUDY_VARIABLE_INT", "int", numArg("value", VALUE_ERROR), truncated),
  variableUpdater("UPDATE_STUDY_VARIABLE_FLOAT", "float", numArg("value", VALUE_ERROR), same),
  variableUpdater("UPDATE_STUDY_VARIABLE_STRING", "string", strArg("value", VALUE_ERROR), same),
  variableUpdater("UPDATE_STUDY_VARIABLE_DATE", "date", numArg("value", VALUE_ERROR), truncated),
]);
