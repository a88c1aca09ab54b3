import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, listMessageTemplates } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { messageTemplateSchema, presentMessageTemplate } from "@studyflow/presenters/message-template";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

const route = createRoute({
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
});

export function registerListMessageTemplates(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "manage-message-templates");
    const templates = await listMessageTemplates(db, studyKey);
    return c.json({ messageTemplates: templates.map(presentMessageTemplate) }, 200);
  });
}
