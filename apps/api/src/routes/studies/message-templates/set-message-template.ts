import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { MAX_TEMPLATE_BODY_LENGTH, MAX_TEMPLATE_SUBJECT_LENGTH, setMessageTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { messageTemplateSchema, presentMessageTemplate } from "@studyflow/presenters/message-template";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent } from "../../schemas";
import { templateParams } from "./template-params";

export function registerSetMessageTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{messageType}/{language}",
      tags: ["message-templates"],
      summary: "Upload the e-mail template of a message type in one language",
      description:
        "The e-mail a participant message of this type becomes: scheduled messages (ADD_MESSAGE) when they are due, " +
        "SEND_MESSAGE_NOW at once. Subject and body are plain text with `{{name}}` placeholders: `studyKey`, " +
        "`studyName` (in the template's language), `messageType`, and the payload's `flags.KEY`, `linkingCodes.KEY` " +
        "and `eventData.KEY` (SEND_MESSAGE_NOW only); a value that is missing renders empty. The HTML part is the " +
        "body, escaped, with its paragraphs. A participant reads the template in the message's language override, " +
        "else the account's language, else English, else the study's first language. A participant message whose " +
        "type has no template in any language is not sent (it fails; `GET /v1/studies/{studyKey}/messages` shows " +
        "it with the reason). Recorded in the audit log " +
        "(`message-template.set`, with the text before). Requires `manage-message-templates`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: templateParams,
        body: jsonBody(
          z
            .strictObject({
              subject: z
                .string()
                .min(1, "subject must not be empty")
                .max(MAX_TEMPLATE_SUBJECT_LENGTH, `subject is longer than ${MAX_TEMPLATE_SUBJECT_LENGTH} characters`)
                .openapi({ example: "{{studyName}}: your weekly survey" }),
              body: z
                .string()
                .min(1, "body must not be empty")
                .max(MAX_TEMPLATE_BODY_LENGTH, `body is longer than ${MAX_TEMPLATE_BODY_LENGTH} characters`)
                .openapi({ example: "Hello,\n\nthis week's survey of {{studyName}} is open." }),
            })
            .openapi("MessageTemplateText"),
        ),
      },
      responses: {
        200: jsonContent(z.object({ messageTemplate: messageTemplateSchema }), "the template, replaced"),
        201: jsonContent(z.object({ messageTemplate: messageTemplateSchema }), "the template, created"),
        ...errorResponses([400, 401, 403, 404], {
          400: "a bad language tag, or a subject or body that is empty, too long or has an unknown placeholder (the message names the field and where)",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey, messageType, language } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-message-templates");
      const { template, created } = await setMessageTemplate(
        db,
        { studyKey, messageType, language, ...c.req.valid("json") },
        who.subject,
        deps,
      );
      const body = { messageTemplate: presentMessageTemplate(template) };
      return created ? c.json(body, 201) : c.json(body, 200);
    },
  );
}
