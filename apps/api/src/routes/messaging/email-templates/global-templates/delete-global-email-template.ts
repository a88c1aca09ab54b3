import { deleteEmailTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { MANAGEMENT_SECURITY } from "../../../schemas";
import { GLOBAL_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { deleteTemplateResponses } from "../../template-answers";
import { assertMessaging, messageTypeParam } from "../../schemas";

export function registerDeleteGlobalEmailTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{messageType}",
      tags: ["messaging"],
      summary: "Delete a global e-mail template (CASE)",
      description:
        "Answers the same whether or not the type had a template, as case-backend does. A deletion is audited " +
        "(`email-template.delete`). " +
        GLOBAL_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: messageTypeParam },
      bothSlashes: true,
      responses: deleteTemplateResponses,
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "global-email-templates");
      await deleteEmailTemplate(db, null, c.req.valid("param").messageType, who.subject);
      return c.json({ message: "template deleted" }, 200);
    },
  );
}
