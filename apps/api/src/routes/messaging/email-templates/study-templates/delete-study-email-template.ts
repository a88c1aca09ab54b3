import { deleteEmailTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { MANAGEMENT_SECURITY } from "../../../schemas";
import { STUDY_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { deleteTemplateResponses } from "../../template-answers";
import { assertMessaging, studyMessageTypeParams } from "../../schemas";

export function registerDeleteStudyEmailTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{studyKey}/{messageType}",
      tags: ["messaging"],
      summary: "Delete a study's e-mail template (CASE)",
      description:
        "Answers the same whether or not the study had a template of the type, as case-backend does. A deletion " +
        "is audited (`email-template.delete`). " +
        STUDY_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyMessageTypeParams },
      bothSlashes: true,
      responses: deleteTemplateResponses,
    },
    async (c) => {
      const who = managementOf(c);
      const { studyKey, messageType } = c.req.valid("param");
      await assertMessaging(db, who, "study-email-templates", studyKey);
      await deleteEmailTemplate(db, studyKey, messageType, who.subject);
      return c.json({ message: "template deleted" }, 200);
    },
  );
}
