import { listStudyEmailTemplates } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { MANAGEMENT_SECURITY } from "../../../schemas";
import { assertMessaging } from "../../schemas";
import { listEmailTemplatesResponses } from "../../template-answers";

/** Every study's templates at once: outside a study's collection, and not limited to a study. */
export function registerListAllStudyEmailTemplates(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["messaging"],
      summary: "List every study's e-mail templates (CASE)",
      description: "Requires permission `messaging/study-email-templates/*` without a limiter (admins always pass).",
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: listEmailTemplatesResponses("the templates, by study and message type"),
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "study-email-templates");
      return c.json({ templates: await listStudyEmailTemplates(db) }, 200);
    },
  );
}
