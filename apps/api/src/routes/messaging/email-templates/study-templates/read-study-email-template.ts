import { z } from "@hono/zod-openapi";
import { readStudyEmailTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../../../schemas";
import { STUDY_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { assertMessaging, emailTemplateSchema, studyMessageTypeParams } from "../../schemas";

export function registerReadStudyEmailTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/{messageType}",
      tags: ["messaging"],
      summary: "Read a study's e-mail template (CASE)",
      description: STUDY_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyMessageTypeParams },
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ template: emailTemplateSchema }), "the template"),
        ...errorResponses([400, 401, 403, 404], { 404: "the study has no template of this type" }),
      },
    },
    async (c) => {
      const { studyKey, messageType } = c.req.valid("param");
      await assertMessaging(db, managementOf(c), "study-email-templates", studyKey);
      return c.json({ template: await readStudyEmailTemplate(db, studyKey, messageType) }, 200);
    },
  );
}
