import { Option } from "commander";
import { z } from "zod";
import { Invalid } from "@studyflow/domain/errors";
import { setMessageTemplate } from "@studyflow/domain/messages";
import { defineCommand, type CliContext } from "../command-definition";
import { readOperatorFile, UPLOADED_BY } from "../command-support";
import { languageTag, studyKey, text } from "../flag-values";
import { fieldLines } from "../output";

export interface MessageTemplateSetInput {
  studyKey: string;
  messageType: string;
  language: string;
  subject: string;
  bodyFile: string;
}

/** The domain names the body "body"; on the command line it is the file's content. */
function namingTheFile(error: unknown, file: string): unknown {
  if (error instanceof Invalid && error.message.startsWith("body: ")) {
    return new Invalid(`--body-file ${file}: ${error.message.slice("body: ".length)}`);
  }
  return error;
}

export async function messageTemplateSet(ctx: CliContext, input: MessageTemplateSetInput) {
  const body = await readOperatorFile(ctx, input.bodyFile, "body file");
  const { template, created } = await setMessageTemplate(
    ctx.database.db,
    {
      studyKey: input.studyKey,
      messageType: input.messageType,
      language: input.language,
      subject: input.subject,
      body,
    },
    UPLOADED_BY,
    ctx,
  ).catch((error: unknown) => {
    throw namingTheFile(error, input.bodyFile);
  });
  const data = { studyKey: input.studyKey, messageTemplate: template, created };
  ctx.output.result(data, [
    `message template "${template.messageType}" (${template.language}) ${created ? "created" : "replaced"} in study "${input.studyKey}"`,
    ...fieldLines([
      ["subject", template.subject],
      ["body", `${template.body.length} characters`],
    ]),
  ]);
  return data;
}

export const messageTemplateSetCommand = defineCommand({
  name: "message-template:set",
  summary:
    "upload the e-mail template of a participant message type in one language: plain text with {{name}} placeholders (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option(
      "--type <TYPE>",
      "message type, as the rules name it (ADD_MESSAGE, SEND_MESSAGE_NOW)",
    ).makeOptionMandatory(),
    new Option("--language <LANG>", "language tag, e.g. en or de-CH").makeOptionMandatory(),
    new Option("--subject <TEXT>", 'subject line, e.g. "{{studyName}}: your weekly survey"').makeOptionMandatory(),
    new Option("--body-file <FILE>", "text file holding the body").makeOptionMandatory(),
  ],
  values: z
    .object({ study: studyKey, type: studyKey, language: languageTag, subject: text, bodyFile: text })
    .transform(({ study, type, language, subject, bodyFile }): MessageTemplateSetInput => ({
      studyKey: study,
      messageType: type,
      language,
      subject,
      bodyFile,
    })),
  uses: "database",
  run: messageTemplateSet,
});
