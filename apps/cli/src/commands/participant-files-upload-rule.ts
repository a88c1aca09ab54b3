import { Option } from "commander";
import { z } from "zod";
import { UsageError } from "../failures";
import { setParticipantFileUploadRule } from "@studyflow/domain/participant-files";
import { defineCommand, type CliContext } from "../command-definition";
import { readJsonFile, UPLOADED_BY } from "../command-support";
import { studyKey, switchFlag, text } from "../flag-values";

export interface ParticipantFilesUploadRuleInput {
  studyKey: string;
  /** A JSON file with one expression; absent with `clear`. */
  ruleFile?: string;
  clear: boolean;
}

/**
 * Sets the study's participantFileUploadRule (CASE's per-study switch for uploads), or removes it
 * so that uploads are refused again. Audited as study.config.update.
 */
export async function participantFilesUploadRule(ctx: CliContext, input: ParticipantFilesUploadRuleInput) {
  const rule = input.ruleFile === undefined ? null : await readJsonFile(ctx, input.ruleFile, "rule file");
  await setParticipantFileUploadRule(ctx.database.db, input.studyKey, rule, UPLOADED_BY, ctx);
  const data = { studyKey: input.studyKey, participantFileUploadRule: rule };
  ctx.output.result(data, [
    rule === null
      ? `study "${input.studyKey}" refuses participant files now (no upload rule)`
      : `upload rule of study "${input.studyKey}" set: uploads are allowed where it is true`,
  ]);
  return data;
}

export const participantFilesUploadRuleCommand = defineCommand({
  name: "participant-files:upload-rule",
  summary:
    "set the expression that allows a participant's upload (CUSTOM event FILE_UPLOAD, payload fileSize and contentType), or --clear it",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--rule <FILE>", 'JSON file holding one expression, e.g. {"name":"lte",...}'),
    new Option("--clear", "remove the rule: uploads are refused"),
  ],
  values: z
    .object({ study: studyKey, rule: text.optional(), clear: switchFlag })
    .transform((values): ParticipantFilesUploadRuleInput => {
      if ((values.rule === undefined) === !values.clear) {
        throw new UsageError("give either --rule FILE or --clear (one of them)");
      }
      return {
        studyKey: values.study,
        clear: values.clear,
        ...(values.rule === undefined ? {} : { ruleFile: values.rule }),
      };
    }),
  uses: "database",
  run: participantFilesUploadRule,
});
