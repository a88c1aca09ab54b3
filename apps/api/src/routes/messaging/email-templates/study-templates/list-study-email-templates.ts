import { listStudyEmailTemplates } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY, studyKeyParam } from "../../../schemas";
import { STUDY_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { assertMessaging, emailTemplatesAnswer } from "../../schemas";

export function registerListStudyEmailTemplates(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}",
      tags: ["messaging"],
      summary: "List a study's e-mail templates (CASE)",
      description: STUDY_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      bothSlashes: true,
      responses: {
        200: jsonContent(emailTemplatesAnswer, "the study's templates, by message type (none: [])"),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertMessaging(db, managementOf(c), "study-email-templates", studyKey);
      return c.json({ templates: await listStudyEmailTemplates(db, studyKey) }, 200);
    },
  );
}
