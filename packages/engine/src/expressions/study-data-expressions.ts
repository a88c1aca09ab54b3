// Study-wide data behind the service ports: code lists, counters, study variables.
import type { EvalContext, Failed } from "../eval-context";
import { FAILED, fail } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, STUDY_DATA, expressionFamily, strArg } from "../function-spec";
import type { StudyVariable } from "../types";

const CAST = "could not cast arguments";
const VARIABLE_KEY = strArg("key", "getStudyVariable: could not cast arguments");

async function readVariable(
  ctx: EvalContext,
  key: string,
  type: StudyVariable["type"],
): Promise<StudyVariable | Failed> {
  const variable = await ctx.services.getStudyVariable(key);
  if (!variable) return fail(ctx, `getStudyVariable: variable ${JSON.stringify(key)} not found`);
  if (variable.type !== type) return fail(ctx, `getStudyVariable: wrong type, expected ${type}, got ${variable.type}`);
  return variable;
}

/** Date variables are Unix seconds; an ISO 8601 string from a port is accepted too. */
function dateSeconds(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === "string") {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return Math.floor(ms / 1000);
  }
  return undefined;
}

function variableReader(
  name: string,
  type: StudyVariable["type"],
  returns: "bool" | "num" | "str",
  convert: (value: unknown) => unknown,
) {
  return {
    name,
    summary: `the study variable's value; it must exist and be declared "${type}"`,
    returns,
    usesServices: true,
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: STUDY_DATA,
    args: [VARIABLE_KEY],
    evaluate: async (ctx: EvalContext, [key]: unknown[]) => {
      const variable = await readVariable(ctx, key as string, type);
      if (variable === FAILED) return FAILED;
      const value = convert(variable.value);
      return value === undefined ? fail(ctx, `${name}: could not cast arguments`) : value;
    },
  };
}

const ifType = (jsType: "boolean" | "number" | "string") => (v: unknown) => (typeof v === jsType ? v : undefined);

export const studyDataExpressions = expressionFamily("study data", [
  {
    name: "isStudyCodePresent",
    summary: "the code is in the study code list; a port failure counts as false",
    returns: "bool",
    usesServices: true,
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: STUDY_DATA,
    args: [strArg("listKey", CAST), strArg("code", CAST)],
    evaluate: async (ctx, [listKey, code]) => {
      try {
        return await ctx.services.isCodePresent(listKey as string, code as string);
      } catch {
        return false;
      }
    },
  },
  {
    name: "getCurrentStudyCounterValue",
    summary: "the counter's value, 0 if it does not exist",
    returns: "num",
    usesServices: true,
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: STUDY_DATA,
    args: [strArg("scope", CAST)],
    evaluate: (ctx, [scope]) => ctx.services.getCounterValue(scope as string),
  },
  {
    name: "getNextStudyCounterValue",
    summary: "increments the counter atomically (side effect) and returns the new value",
    returns: "num",
    usesServices: true,
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [strArg("scope", CAST)],
    evaluate: (ctx, [scope]) => ctx.services.incrementCounter(scope as string),
  },
  variableReader("getStudyVariableBoolean", "boolean", "bool", ifType("boolean")),
  variableReader("getStudyVariableInt", "int", "num", ifType("number")),
  variableReader("getStudyVariableFloat", "float", "num", ifType("number")),
  variableReader("getStudyVariableString", "string", "str", ifType("string")),
  variableReader("getStudyVariableDate", "date", "num", dateSeconds),
]);
