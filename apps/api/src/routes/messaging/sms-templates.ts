import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { readSmsTemplate, saveSmsTemplate } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../schemas";
import { assertMessaging, messageTypeParam, smsTemplateBody, smsTemplateSchema } from "./schemas";

const PERMISSION = "Requires permission `messaging/sms-templates/*` (admins always pass).";
const smsTemplateAnswer = z.object({ template: smsTemplateSchema });

/** case-backend's SMS templates: stored and answered for case-admin; studyflow sends no SMS. */
export function registerSmsTemplates(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  caseRoute(
    router,
    {
      method: "post",
      path: "/sms-templates",
      tags: ["messaging"],
      summary: "Save an SMS template (CASE)",
      description:
        'Stored only: studyflow sends no SMS. Without `id` (or with `""`) a new template: 409 when the type has ' +
        "one already; with `id`, a replacement of it (404 if unknown). Every translation's `templateDef` must be " +
        "base64 of a Go template that parses and runs with no data (400 naming the translation). Audited " +
        "`sms-template.save`. " +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      body: smsTemplateBody,
      responses: {
        200: jsonContent(smsTemplateAnswer, "the saved template"),
        ...errorResponses([400, 401, 403, 404, 409], {
          404: "no SMS template with this id",
          409: "an SMS template of this type exists (send its id)",
        }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "sms-templates");
      return c.json({ template: await saveSmsTemplate(db, c.req.valid("json"), who.subject) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/sms-templates/{messageType}",
      tags: ["messaging"],
      summary: "Read an SMS template (CASE)",
      description:
        'A type without a template answers an empty one (`id` "", no translations), as case-backend does. ' +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: messageTypeParam },
      responses: {
        200: jsonContent(smsTemplateAnswer, "the template (empty when the type has none)"),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "sms-templates");
      return c.json({ template: await readSmsTemplate(db, c.req.valid("param").messageType) }, 200);
    },
  );
}
