import { Option } from "commander";
import { z } from "zod";
import { deleteStudyVariable } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { studyKey } from "../flag-values";

export async function variableDelete(ctx: CliContext, input: { studyKey: string; key: string }) {
  await deleteStudyVariable(ctx.database.db, input.studyKey, input.key, UPLOADED_BY);
  const data = { studyKey: input.studyKey, deleted: input.key };
  ctx.output.result(data, [`study variable "${input.key}" deleted from study "${input.studyKey}"`]);
  return data;
}

export const variableDeleteCommand = defineCommand({
  name: "variable:delete",
  summary: "delete a study variable; rules that use it fail from then on (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--key <KEY>", "variable key").makeOptionMandatory(),
  ],
  values: z.object({ study: studyKey, key: studyKey }).transform(({ study, key }) => ({ studyKey: study, key })),
  uses: "database",
  run: variableDelete,
});
