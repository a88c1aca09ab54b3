import { z } from "@hono/zod-openapi";
import { readSmsTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../../schemas";
import { SMS_TEMPLATES_PERMISSION } from "../permission-texts";
import { assertMessaging, messageTypeParam, smsTemplateSchema } from "../schemas";

export function registerReadSmsTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{messageType}",
      tags: ["messaging"],
      summary: "Read an SMS template (CASE)",
      description:
        'A type without a template answers an empty one (`id` "", no translations), as case-backend does. ' +
        SMS_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: messageTypeParam },
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ template: smsTemplateSchema }), "the template (empty when the type has none)"),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "sms-templates");
      return c.json({ template: await readSmsTemplate(db, c.req.valid("param").messageType) }, 200);
    },
  );
}
