import { saveEmailTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { MANAGEMENT_SECURITY } from "../../../schemas";
import { GLOBAL_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { saveTemplateResponses } from "../../template-answers";
import { assertMessaging, emailTemplateBody, emailTemplateSchema } from "../../schemas";

export function registerSaveGlobalEmailTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: ["messaging"],
      summary: "Save a global e-mail template (CASE)",
      description:
        'Without `id` (or with `""`) a new template: 409 when the type has one already. With `id`, a ' +
        "replacement of that global template (404 if unknown). `messageType` is trimmed, stripped of quotes and " +
        "line breaks and URL-escaped; `studyKey` is ignored (a study's template is saved at " +
        "`…/study-templates/{studyKey}`). Every translation's `templateDef` must be base64 of a Go template that " +
        "parses and runs with no data within the limits on a rendering's work (100,000 steps, 1 MiB of text; 400 " +
        "naming the translation and the problem). Audited `email-template.save`. " +
        GLOBAL_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      caseBody: emailTemplateBody,
      bothSlashes: true,
      responses: saveTemplateResponses(emailTemplateSchema, {
        404: "no global template with this id",
        409: "a global template of this type exists (send its id)",
      }),
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "global-email-templates");
      const template = await saveEmailTemplate(db, null, c.req.valid("json"), who.subject, deps);
      return c.json({ template }, 200);
    },
  );
}
