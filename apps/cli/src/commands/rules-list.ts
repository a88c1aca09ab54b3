import { Option } from "commander";
import { z } from "zod";
import { listRulesVersions } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey } from "../flag-values";

export async function rulesList(ctx: CliContext, input: { studyKey: string }) {
  const versions = await listRulesVersions(ctx.database.db, input.studyKey);
  const data = { studyKey: input.studyKey, versions };
  ctx.output.result(data, [
    `${versions.length} rules version${versions.length === 1 ? "" : "s"} of study "${input.studyKey}" (newest, the current one, first)`,
    ...versions.map(
      (v) =>
        `${String(v.version).padStart(4)}  ${v.uploadedAt.toISOString()}  ${v.uploadedBy}  ${v.ruleCount} rule${v.ruleCount === 1 ? "" : "s"}`,
    ),
  ]);
  return data;
}

export const rulesListCommand = defineCommand({
  name: "rules:list",
  summary: "list a study's rules versions, newest first: number, upload time, uploader, rule count",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform(({ study }) => ({ studyKey: study })),
  uses: "database",
  run: rulesList,
});
