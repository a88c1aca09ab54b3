import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { readMessageTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { messageTemplateSchema, presentMessageTemplate } from "@studyflow/presenters/message-template";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { templateParams } from "./template-params";

export function registerGetMessageTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{messageType}/{language}",
      tags: ["message-templates"],
      summary: "One message template",
      description: "Its subject, body and last change. Requires `manage-message-templates`.",
      security: MANAGEMENT_SECURITY,
      request: { params: templateParams },
      responses: {
        200: jsonContent(z.object({ messageTemplate: messageTemplateSchema }), "the template"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or template not found" }),
      },
    },
    async (c) => {
      const { studyKey, messageType, language } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-message-templates");
      const template = await readMessageTemplate(db, { studyKey, messageType, language });
      return c.json({ messageTemplate: presentMessageTemplate(template) }, 200);
    },
  );
}
