import { saveSmsTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { SMS_TEMPLATES_PERMISSION } from "../permission-texts";
import { saveTemplateResponses } from "../template-answers";
import { assertMessaging, smsTemplateBody, smsTemplateSchema } from "../schemas";

export function registerSaveSmsTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: ["messaging"],
      summary: "Save an SMS template (CASE)",
      description:
        'Stored only: studyflow sends no SMS. Without `id` (or with `""`) a new template: 409 when the type has ' +
        "one already; with `id`, a replacement of it (404 if unknown). Every translation's `templateDef` must be " +
        "base64 of a Go template that parses and runs with no data within the limits on a rendering's work " +
        "(100,000 steps, 1 MiB of text; 400 naming the translation and the problem). Audited " +
        "`sms-template.save`. " +
        SMS_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      caseBody: smsTemplateBody,
      bothSlashes: true,
      responses: saveTemplateResponses(smsTemplateSchema, {
        404: "no SMS template with this id",
        409: "an SMS template of this type exists (send its id)",
      }),
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "sms-templates");
      const template = await saveSmsTemplate(db, c.req.valid("json"), who.subject, deps);
      return c.json({ template }, 200);
    },
  );
}
