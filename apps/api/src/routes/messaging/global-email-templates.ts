import type { OpenAPIHono } from "@hono/zod-openapi";
import {
  deleteEmailTemplate,
  listGlobalEmailTemplates,
  readGlobalEmailTemplate,
  saveEmailTemplate,
} from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { emailTemplateBody, emailTemplateSchema } from "./schemas";
import { registerTemplateRoutes, templateFamily } from "./template-routes";

/**
 * case-backend's global e-mail templates (messaging-service.go): the templates of no study
 * (registration, password reset, newsletters…), one per message type.
 */
export function registerGlobalEmailTemplates(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  registerTemplateRoutes(
    router,
    deps,
    templateFamily({
      collection: "/email-templates/global-templates",
      perStudy: false,
      resource: "global-email-templates",
      permission: "Requires permission `messaging/global-email-templates/*` (admins always pass).",
      body: emailTemplateBody,
      template: emailTemplateSchema,
      list: {
        summary: "List the global e-mail templates (CASE)",
        description: "",
        answer: "the templates, by message type",
        run: (db) => listGlobalEmailTemplates(db),
      },
      save: {
        summary: "Save a global e-mail template (CASE)",
        description:
          'Without `id` (or with `""`) a new template: 409 when the type has one already. With `id`, a ' +
          "replacement of that global template (404 if unknown). `messageType` is trimmed, stripped of quotes and " +
          "line breaks and URL-escaped; `studyKey` is ignored (a study's template is saved at " +
          "`…/study-templates/{studyKey}`). Every translation's `templateDef` must be base64 of a Go template that " +
          "parses and runs with no data within the limits on a rendering's work (100,000 steps, 1 MiB of text; 400 " +
          "naming the translation and the problem). Audited `email-template.save`. ",
        notFound: "no global template with this id",
        conflict: "a global template of this type exists (send its id)",
        run: (db, _scope, input, actor) => saveEmailTemplate(db, null, input, actor),
      },
      read: {
        summary: "Read a global e-mail template (CASE)",
        description:
          'A type without a template answers an empty one (`id` "", no translations), as case-backend does. ',
        answer: "the template (empty when the type has none)",
        run: (db, _scope, messageType) => readGlobalEmailTemplate(db, messageType),
      },
      remove: {
        summary: "Delete a global e-mail template (CASE)",
        description:
          "Answers the same whether or not the type had a template, as case-backend does. A deletion is audited " +
          "(`email-template.delete`). ",
        run: (db, _scope, messageType, actor) => deleteEmailTemplate(db, null, messageType, actor),
      },
    }),
  );
}
