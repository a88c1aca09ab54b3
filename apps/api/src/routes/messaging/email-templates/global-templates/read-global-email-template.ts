import { readGlobalEmailTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { MANAGEMENT_SECURITY } from "../../../schemas";
import { GLOBAL_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { EMPTY_TEMPLATE_NOTE, readTemplateResponses } from "../../template-answers";
import { assertMessaging, emailTemplateSchema, messageTypeParam } from "../../schemas";

export function registerReadGlobalEmailTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{messageType}",
      tags: ["messaging"],
      summary: "Read a global e-mail template (CASE)",
      description: EMPTY_TEMPLATE_NOTE + GLOBAL_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: messageTypeParam },
      bothSlashes: true,
      responses: readTemplateResponses(emailTemplateSchema),
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "global-email-templates");
      return c.json({ template: await readGlobalEmailTemplate(db, c.req.valid("param").messageType) }, 200);
    },
  );
}
