import { Option } from "commander";
import { z } from "zod";
import { setStudyRules } from "@studyflow/domain/study-setup";
import { defineCommand, type CliContext } from "../command-definition";
import { readRulesFile, requireStudy, UPLOADED_BY } from "../command-support";
import { studyKey, text } from "../flag-values";

export interface StudySetRulesInput {
  key: string;
  rulesFile: string;
}

export async function studySetRules(ctx: CliContext, input: StudySetRulesInput) {
  await requireStudy(ctx.database.db, input.key);
  const rules = await readRulesFile(ctx, input.rulesFile);
  const version = await setStudyRules(ctx.database.db, input.key, rules, UPLOADED_BY);
  const data = { studyKey: input.key, version, ruleCount: rules.length };
  ctx.output.result(data, [`rules version ${version} stored for study "${input.key}" (${rules.length} rules)`]);
  return data;
}

export const studySetRulesCommand = defineCommand({
  name: "study:set-rules",
  summary: "validate a rules file and store it as the study's next rules version",
  flags: () => [
    new Option("--key <KEY>", "study key").makeOptionMandatory(),
    new Option("--rules <FILE>", "JSON file holding an array of rule expressions").makeOptionMandatory(),
  ],
  values: z
    .object({ key: studyKey, rules: text })
    .transform(({ key, rules }): StudySetRulesInput => ({ key, rulesFile: rules })),
  uses: "database",
  run: studySetRules,
});
