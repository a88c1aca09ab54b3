import { Option } from "commander";
import { z } from "zod";
import { listStudyVariables, type StoredStudyVariable } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey } from "../flag-values";
import { fieldLines } from "../output";

/** A value for people: a date also as its UTC instant. */
export function variableValueText(variable: Pick<StoredStudyVariable, "type" | "value">): string {
  if (variable.type === "date" && typeof variable.value === "number") {
    const instant = new Date(variable.value * 1000);
    return Number.isNaN(instant.getTime()) ? String(variable.value) : `${variable.value} (${instant.toISOString()})`;
  }
  return typeof variable.value === "string" ? JSON.stringify(variable.value) : String(variable.value);
}

export async function variableList(ctx: CliContext, input: { studyKey: string }) {
  const variables = await listStudyVariables(ctx.database.db, input.studyKey);
  const data = { studyKey: input.studyKey, variables };
  ctx.output.result(data, [
    `${variables.length} study variable${variables.length === 1 ? "" : "s"} in study "${input.studyKey}"`,
    ...fieldLines(variables.map((v) => [v.key, `${v.type.padEnd(7)}  ${variableValueText(v)}`] as const)),
  ]);
  return data;
}

export const variableListCommand = defineCommand({
  name: "variable:list",
  summary: "list a study's variables with their types and values",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform(({ study }) => ({ studyKey: study })),
  uses: "database",
  run: variableList,
});
