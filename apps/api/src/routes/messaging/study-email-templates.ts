import type { OpenAPIHono } from "@hono/zod-openapi";
import {
  deleteEmailTemplate,
  listStudyEmailTemplates,
  readStudyEmailTemplate,
  saveEmailTemplate,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY, messageSchema, studyKeyParam } from "../schemas";
import {
  assertMessaging,
  emailTemplateAnswer,
  emailTemplateBody,
  emailTemplatesAnswer,
  studyMessageTypeParams,
} from "./schemas";

const PERMISSION =
  "Requires permission `messaging/study-email-templates/*`, unlimited or limited to `{studyKey}` of the study " +
  "(admins always pass).";

/**
 * case-backend's study e-mail templates (messaging-service.go): one per study and message type,
 * what the study's own messages are written in for case-admin.
 */
export function registerStudyEmailTemplates(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  caseRoute(
    router,
    {
      method: "get",
      path: "/email-templates/study-templates",
      tags: ["messaging"],
      summary: "List every study's e-mail templates (CASE)",
      description: "Requires permission `messaging/study-email-templates/*` without a limiter (admins always pass).",
      security: MANAGEMENT_SECURITY,
      responses: {
        200: jsonContent(emailTemplatesAnswer, "the templates, by study and message type"),
        ...errorResponses([401, 403]),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "study-email-templates");
      return c.json({ templates: await listStudyEmailTemplates(db) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/email-templates/study-templates/{studyKey}",
      tags: ["messaging"],
      summary: "List a study's e-mail templates (CASE)",
      description: PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(emailTemplatesAnswer, "the study's templates, by message type (none: [])"),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertMessaging(db, managementOf(c), "study-email-templates", studyKey);
      return c.json({ templates: await listStudyEmailTemplates(db, studyKey) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "post",
      path: "/email-templates/study-templates/{studyKey}",
      tags: ["messaging"],
      summary: "Save a study's e-mail template (CASE)",
      description:
        "The template's `studyKey` is the path's. Without `id` (or with `\"\"`) a new template: 409 when the " +
        "study has one of the type already; with `id`, a replacement of that template of the study (404 if " +
        "unknown). `messageType` is trimmed, stripped of quotes and line breaks and URL-escaped. Every " +
        "translation's `templateDef` must be base64 of a Go template that parses and runs with no data (400 " +
        "naming the translation). Audited `email-template.save`. " +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      body: emailTemplateBody,
      responses: {
        200: jsonContent(emailTemplateAnswer, "the saved template"),
        ...errorResponses([400, 401, 403, 404, 409], {
          404: "study not found, or no template of the study with this id",
          409: "the study has a template of this type (send its id)",
        }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const { studyKey } = c.req.valid("param");
      await assertMessaging(db, who, "study-email-templates", studyKey);
      const template = await saveEmailTemplate(db, studyKey, c.req.valid("json"), who.subject);
      return c.json({ template }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/email-templates/study-templates/{studyKey}/{messageType}",
      tags: ["messaging"],
      summary: "Read a study's e-mail template (CASE)",
      description: PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyMessageTypeParams },
      responses: {
        200: jsonContent(emailTemplateAnswer, "the template"),
        ...errorResponses([400, 401, 403, 404], { 404: "the study has no template of this type" }),
      },
    },
    async (c) => {
      const { studyKey, messageType } = c.req.valid("param");
      await assertMessaging(db, managementOf(c), "study-email-templates", studyKey);
      return c.json({ template: await readStudyEmailTemplate(db, studyKey, messageType) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: "/email-templates/study-templates/{studyKey}/{messageType}",
      tags: ["messaging"],
      summary: "Delete a study's e-mail template (CASE)",
      description:
        "Answers the same whether or not the study had a template of the type, as case-backend does. A deletion " +
        "is audited (`email-template.delete`). " +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyMessageTypeParams },
      responses: {
        200: jsonContent(messageSchema, '`{"message": "template deleted"}`'),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const { studyKey, messageType } = c.req.valid("param");
      await assertMessaging(db, who, "study-email-templates", studyKey);
      await deleteEmailTemplate(db, studyKey, messageType, who.subject);
      return c.json({ message: "template deleted" }, 200);
    },
  );
}
