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
import { jsonContent, MANAGEMENT_SECURITY } from "../schemas";
import { assertMessaging, emailTemplateBody, emailTemplateSchema, emailTemplatesAnswer } from "./schemas";
import { registerTemplateRoutes, templateFamily } from "./template-routes";

/**
 * case-backend's study e-mail templates (messaging-service.go): one per study and message type,
 * what the study's own messages are written in for case-admin.
 */
export function registerStudyEmailTemplates(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  // every study's at once: outside the family's `{studyKey}` collection, and not limited to a study
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

  registerTemplateRoutes(
    router,
    deps,
    templateFamily({
      collection: "/email-templates/study-templates/{studyKey}",
      perStudy: true,
      resource: "study-email-templates",
      permission:
        "Requires permission `messaging/study-email-templates/*`, unlimited or limited to `{studyKey}` of the study " +
        "(admins always pass).",
      body: emailTemplateBody,
      template: emailTemplateSchema,
      list: {
        summary: "List a study's e-mail templates (CASE)",
        description: "",
        answer: "the study's templates, by message type (none: [])",
        run: (db, studyKey) => listStudyEmailTemplates(db, studyKey ?? undefined),
      },
      save: {
        summary: "Save a study's e-mail template (CASE)",
        description:
          "The template's `studyKey` is the path's. Without `id` (or with `\"\"`) a new template: 409 when the " +
          "study has one of the type already; with `id`, a replacement of that template of the study (404 if " +
          "unknown). `messageType` is trimmed, stripped of quotes and line breaks and URL-escaped. Every " +
          "translation's `templateDef` must be base64 of a Go template that parses and runs with no data within " +
          "the limits on a rendering's work (100,000 steps, 1 MiB of text; 400 naming the translation and the " +
          "problem). Audited `email-template.save`. ",
        notFound: "study not found, or no template of the study with this id",
        conflict: "the study has a template of this type (send its id)",
        run: (db, studyKey, input, actor) => saveEmailTemplate(db, studyKey, input, actor),
      },
      read: {
        summary: "Read a study's e-mail template (CASE)",
        description: "",
        notFound: "the study has no template of this type",
        answer: "the template",
        run: (db, studyKey, messageType) => readStudyEmailTemplate(db, studyKey ?? "", messageType),
      },
      remove: {
        summary: "Delete a study's e-mail template (CASE)",
        description:
          "Answers the same whether or not the study had a template of the type, as case-backend does. A deletion " +
          "is audited (`email-template.delete`). ",
        run: (db, studyKey, messageType, actor) => deleteEmailTemplate(db, studyKey, messageType, actor),
      },
    }),
  );
}
