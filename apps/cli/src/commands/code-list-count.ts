import { Option } from "commander";
import { z } from "zod";
import { countStudyCodes } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey } from "../flag-values";

export async function codeListCount(ctx: CliContext, input: { studyKey: string; listKey: string }) {
  const codeCount = await countStudyCodes(ctx.database.db, input.studyKey, input.listKey);
  const data = { studyKey: input.studyKey, listKey: input.listKey, codeCount };
  ctx.output.result(data, [`list "${input.listKey}" of study "${input.studyKey}" holds ${codeCount} codes`]);
  return data;
}

export const codeListCountCommand = defineCommand({
  name: "code-list:count",
  summary: "how many codes a study code list holds (0 for an unknown list)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--list <LIST>", "code list key").makeOptionMandatory(),
  ],
  values: z
    .object({ study: studyKey, list: studyKey })
    .transform(({ study, list }) => ({ studyKey: study, listKey: list })),
  uses: "database",
  run: codeListCount,
});
