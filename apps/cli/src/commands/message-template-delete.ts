import { Option } from "commander";
import { z } from "zod";
import { deleteMessageTemplate } from "@studyflow/domain/messages";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { languageTag, studyKey } from "../flag-values";

export interface MessageTemplateDeleteInput {
  studyKey: string;
  messageType: string;
  language: string;
}

export async function messageTemplateDelete(ctx: CliContext, input: MessageTemplateDeleteInput) {
  await deleteMessageTemplate(ctx.database.db, input, UPLOADED_BY);
  const data = { studyKey: input.studyKey, deleted: { messageType: input.messageType, language: input.language } };
  ctx.output.result(data, [
    `message template "${input.messageType}" (${input.language}) deleted from study "${input.studyKey}"`,
  ]);
  return data;
}

export const messageTemplateDeleteCommand = defineCommand({
  name: "message-template:delete",
  summary: "delete a message template; without any template left, the type's scheduled messages are dropped (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--type <TYPE>", "message type").makeOptionMandatory(),
    new Option("--language <LANG>", "language tag").makeOptionMandatory(),
  ],
  values: z
    .object({ study: studyKey, type: studyKey, language: languageTag })
    .transform(({ study, type, language }): MessageTemplateDeleteInput => ({
      studyKey: study,
      messageType: type,
      language,
    })),
  uses: "database",
  run: messageTemplateDelete,
});
