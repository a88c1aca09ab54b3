import { Option } from "commander";
import { z } from "zod";
import { listMessageTemplates } from "@studyflow/domain/messages";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey } from "../flag-values";
import { fieldLines } from "../output";

export async function messageTemplateList(ctx: CliContext, input: { studyKey: string }) {
  const messageTemplates = await listMessageTemplates(ctx.database.db, input.studyKey);
  const data = { studyKey: input.studyKey, messageTemplates };
  ctx.output.result(data, [
    `${messageTemplates.length} message template${messageTemplates.length === 1 ? "" : "s"} in study "${input.studyKey}"`,
    ...fieldLines(
      messageTemplates.map(
        (t) => [`${t.messageType} ${t.language}`, `${t.subject}  (${t.body.length} characters)`] as const,
      ),
    ),
  ]);
  return data;
}

export const messageTemplateListCommand = defineCommand({
  name: "message-template:list",
  summary: "list a study's message templates by type and language",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform(({ study }) => ({ studyKey: study })),
  uses: "database",
  run: messageTemplateList,
});
