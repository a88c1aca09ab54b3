import { Option } from "commander";
import { z } from "zod";
import { getRulesVersion } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey, text } from "../flag-values";

export interface RulesShowInput {
  studyKey: string;
  version: number | "current";
}

export async function rulesShow(ctx: CliContext, input: RulesShowInput) {
  const stored = await getRulesVersion(ctx.database.db, input.studyKey, input.version);
  const data = { studyKey: input.studyKey, ...stored };
  // the rules as a file study:set-rules takes back, after one header line
  ctx.output.result(data, [
    `rules version ${stored.version} of study "${input.studyKey}", uploaded ${stored.uploadedAt.toISOString()} by ${stored.uploadedBy}`,
    JSON.stringify(stored.rules, null, 2),
  ]);
  return data;
}

export const rulesShowCommand = defineCommand({
  name: "rules:show",
  summary: "print one rules version of a study as JSON (default: the current one)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--version <N|current>", "version number, or current (default)"),
  ],
  values: z
    .object({
      study: studyKey,
      version: text.regex(/^(current|[1-9]\d{0,8})$/, "must be a version number or current").optional(),
    })
    .transform(({ study, version }): RulesShowInput => ({
      studyKey: study,
      version: version === undefined || version === "current" ? "current" : Number(version),
    })),
  uses: "database",
  run: rulesShow,
});
