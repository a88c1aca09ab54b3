import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listMessageTemplates } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { messageTemplateSchema, presentMessageTemplate } from "@studyflow/presenters/message-template";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerListMessageTemplates(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["message-templates"],
      summary: "A study's message templates",
      description: "By message type, then language. Requires `manage-message-templates`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ messageTemplates: z.array(messageTemplateSchema) }), "the study's templates"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-message-templates");
      const templates = await listMessageTemplates(db, studyKey);
      return c.json({ messageTemplates: templates.map(presentMessageTemplate) }, 200);
    },
  );
}
