import { listGlobalEmailTemplates } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { MANAGEMENT_SECURITY } from "../../../schemas";
import { GLOBAL_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { assertMessaging } from "../../schemas";
import { listEmailTemplatesResponses } from "../../template-answers";

export function registerListGlobalEmailTemplates(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["messaging"],
      summary: "List the global e-mail templates (CASE)",
      description: GLOBAL_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: listEmailTemplatesResponses("the templates, by message type"),
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "global-email-templates");
      return c.json({ templates: await listGlobalEmailTemplates(db) }, 200);
    },
  );
}
