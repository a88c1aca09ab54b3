import type { OpenAPIHono } from "@hono/zod-openapi";
import { readSmsTemplate, saveSmsTemplate } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { smsTemplateBody, smsTemplateSchema } from "./schemas";
import { registerTemplateRoutes, templateFamily } from "./template-routes";

/** case-backend's SMS templates: stored and answered for case-admin; studyflow sends no SMS. */
export function registerSmsTemplates(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  registerTemplateRoutes(
    router,
    deps,
    templateFamily({
      collection: "/sms-templates",
      perStudy: false,
      resource: "sms-templates",
      permission: "Requires permission `messaging/sms-templates/*` (admins always pass).",
      body: smsTemplateBody,
      template: smsTemplateSchema,
      save: {
        summary: "Save an SMS template (CASE)",
        description:
          'Stored only: studyflow sends no SMS. Without `id` (or with `""`) a new template: 409 when the type has ' +
          "one already; with `id`, a replacement of it (404 if unknown). Every translation's `templateDef` must be " +
          "base64 of a Go template that parses and runs with no data within the limits on a rendering's work " +
          "(100,000 steps, 1 MiB of text; 400 naming the translation and the problem). Audited " +
          "`sms-template.save`. ",
        notFound: "no SMS template with this id",
        conflict: "an SMS template of this type exists (send its id)",
        run: (db, _scope, input, actor) => saveSmsTemplate(db, input, actor),
      },
      read: {
        summary: "Read an SMS template (CASE)",
        description:
          'A type without a template answers an empty one (`id` "", no translations), as case-backend does. ',
        answer: "the template (empty when the type has none)",
        run: (db, _scope, messageType) => readSmsTemplate(db, messageType),
      },
    }),
  );
}
