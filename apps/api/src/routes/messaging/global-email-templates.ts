import type { OpenAPIHono } from "@hono/zod-openapi";
import {
  deleteEmailTemplate,
  listGlobalEmailTemplates,
  readGlobalEmailTemplate,
  saveEmailTemplate,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY, messageSchema } from "../schemas";
import {
  assertMessaging,
  emailTemplateAnswer,
  emailTemplateBody,
  emailTemplatesAnswer,
  messageTypeParam,
} from "./schemas";

const PERMISSION = "Requires permission `messaging/global-email-templates/*` (admins always pass).";

/**
 * case-backend's global e-mail templates (messaging-service.go): the templates of no study
 * (registration, password reset, newsletters…), one per message type.
 */
export function registerGlobalEmailTemplates(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  caseRoute(
    router,
    {
      method: "get",
      path: "/email-templates/global-templates",
      tags: ["messaging"],
      summary: "List the global e-mail templates (CASE)",
      description: PERMISSION,
      security: MANAGEMENT_SECURITY,
      responses: {
        200: jsonContent(emailTemplatesAnswer, "the templates, by message type"),
        ...errorResponses([401, 403]),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "global-email-templates");
      return c.json({ templates: await listGlobalEmailTemplates(db) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "post",
      path: "/email-templates/global-templates",
      tags: ["messaging"],
      summary: "Save a global e-mail template (CASE)",
      description:
        'Without `id` (or with `""`) a new template: 409 when the type has one already. With `id`, a ' +
        "replacement of that global template (404 if unknown). `messageType` is trimmed, stripped of quotes and " +
        "line breaks and URL-escaped; `studyKey` is ignored (a study's template is saved at " +
        "`…/study-templates/{studyKey}`). Every translation's `templateDef` must be base64 of a Go template that " +
        "parses and runs with no data (400 naming the translation). Audited `email-template.save`. " +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      body: emailTemplateBody,
      responses: {
        200: jsonContent(emailTemplateAnswer, "the saved template"),
        ...errorResponses([400, 401, 403, 404, 409], {
          404: "no global template with this id",
          409: "a global template of this type exists (send its id)",
        }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "global-email-templates");
      const template = await saveEmailTemplate(db, null, c.req.valid("json"), who.subject);
      return c.json({ template }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/email-templates/global-templates/{messageType}",
      tags: ["messaging"],
      summary: "Read a global e-mail template (CASE)",
      description:
        'A type without a template answers an empty one (`id` "", no translations), as case-backend does. ' +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: messageTypeParam },
      responses: {
        200: jsonContent(emailTemplateAnswer, "the template (empty when the type has none)"),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "global-email-templates");
      const { messageType } = c.req.valid("param");
      return c.json({ template: await readGlobalEmailTemplate(db, messageType) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: "/email-templates/global-templates/{messageType}",
      tags: ["messaging"],
      summary: "Delete a global e-mail template (CASE)",
      description:
        "Answers the same whether or not the type had a template, as case-backend does. A deletion is audited " +
        "(`email-template.delete`). " +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: messageTypeParam },
      responses: {
        200: jsonContent(messageSchema, '`{"message": "template deleted"}`'),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "global-email-templates");
      await deleteEmailTemplate(db, null, c.req.valid("param").messageType, who.subject);
      return c.json({ message: "template deleted" }, 200);
    },
  );
}
