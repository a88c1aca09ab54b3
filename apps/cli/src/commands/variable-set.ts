import { Option } from "commander";
import { z } from "zod";
import type { StudyVariableType } from "@studyflow/db";
import { NotFound } from "@studyflow/domain/errors";
import {
  STUDY_VARIABLE_TYPES,
  parseStudyVariableText,
  readStudyVariable,
  setStudyVariable,
} from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { UsageError } from "../failures";
import { oneOf, studyKey } from "../flag-values";
import { fieldLines } from "../output";
import { variableValueText } from "./variable-list";

export interface VariableSetInput {
  studyKey: string;
  key: string;
  /** Needed to define the variable; absent, the variable's own type reads the value. */
  type?: StudyVariableType;
  /** As typed: "42", "true", "2026-11-01". */
  value: string;
}

/** The type the value is read as: the one given, else the variable's own. */
async function typeOf(ctx: CliContext, input: VariableSetInput): Promise<StudyVariableType> {
  if (input.type) return input.type;
  try {
    return (await readStudyVariable(ctx.database.db, input.studyKey, input.key)).type;
  } catch (error) {
    if (error instanceof NotFound && error.message.startsWith("study variable")) {
      throw new UsageError(`study variable "${input.key}" does not exist yet: give --type to define it`);
    }
    throw error;
  }
}

export async function variableSet(ctx: CliContext, input: VariableSetInput) {
  const type = await typeOf(ctx, input);
  const value = parseStudyVariableText(type, input.value, "--value");
  const { variable, created } = await setStudyVariable(
    ctx.database.db,
    input.studyKey,
    input.key,
    { ...(input.type ? { type: input.type } : {}), value },
    UPLOADED_BY,
    ctx,
  );
  const data = { studyKey: input.studyKey, variable, created };
  ctx.output.result(data, [
    `study variable "${variable.key}" ${created ? "defined" : "set"} in study "${input.studyKey}"`,
    ...fieldLines([
      ["type", variable.type],
      ["value", variableValueText(variable)],
    ]),
  ]);
  return data;
}

export const variableSetCommand = defineCommand({
  name: "variable:set",
  summary: "define a study variable or set its value (and type); dates as Unix seconds or ISO 8601 (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--key <KEY>", "variable key, e.g. kitStock").makeOptionMandatory(),
    new Option("--type <TYPE>", `${STUDY_VARIABLE_TYPES.join(", ")}; needed to define, or to change the type`),
    new Option("--value <VALUE>", "the value, e.g. 250, 0.85, true, 2026-11-01T09:00:00Z").makeOptionMandatory(),
  ],
  values: z
    .object({
      study: studyKey,
      key: studyKey,
      type: oneOf(STUDY_VARIABLE_TYPES).optional(),
      // a string variable may hold any text, blank included
      value: z.string(),
    })
    .transform(({ study, key, type, value }): VariableSetInput => ({
      studyKey: study,
      key,
      ...(type === undefined ? {} : { type }),
      value,
    })),
  uses: "database",
  run: variableSet,
});
