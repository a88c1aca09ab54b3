import { listStudyEmailTemplates } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../../../schemas";
import { assertMessaging, emailTemplatesAnswer } from "../../schemas";

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
}
