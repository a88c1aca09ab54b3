import { Option } from "commander";
import { z } from "zod";
import { removeStudyCode } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { studyKey, text } from "../flag-values";

export interface CodeListRemoveInput {
  studyKey: string;
  listKey: string;
  code: string;
}

export async function codeListRemove(ctx: CliContext, input: CodeListRemoveInput) {
  await removeStudyCode(ctx.database.db, input.studyKey, input.listKey, input.code, UPLOADED_BY);
  const data = { studyKey: input.studyKey, listKey: input.listKey, removed: input.code };
  ctx.output.result(data, [`code "${input.code}" removed from list "${input.listKey}" of study "${input.studyKey}"`]);
  return data;
}

export const codeListRemoveCommand = defineCommand({
  name: "code-list:remove",
  summary: "remove one code from a study code list (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--list <LIST>", "code list key").makeOptionMandatory(),
    new Option("--code <CODE>", "the code").makeOptionMandatory(),
  ],
  values: z
    .object({ study: studyKey, list: studyKey, code: text })
    .transform(({ study, list, code }): CodeListRemoveInput => ({ studyKey: study, listKey: list, code })),
  uses: "database",
  run: codeListRemove,
});
