import { saveEmailTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../../schemas";
import { STUDY_EMAIL_TEMPLATES_PERMISSION } from "../../permission-texts";
import { saveTemplateResponses } from "../../template-answers";
import { assertMessaging, emailTemplateBody, emailTemplateSchema } from "../../schemas";

export function registerSaveStudyEmailTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{studyKey}",
      tags: ["messaging"],
      summary: "Save a study's e-mail template (CASE)",
      description:
        "The template's `studyKey` is the path's. Without `id` (or with `\"\"`) a new template: 409 when the " +
        "study has one of the type already; with `id`, a replacement of that template of the study (404 if " +
        "unknown). `messageType` is trimmed, stripped of quotes and line breaks and URL-escaped. Every " +
        "translation's `templateDef` must be base64 of a Go template that parses and runs with no data within " +
        "the limits on a rendering's work (100,000 steps, 1 MiB of text; 400 naming the translation and the " +
        "problem). Audited `email-template.save`. " +
        STUDY_EMAIL_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: emailTemplateBody,
      bothSlashes: true,
      responses: saveTemplateResponses(emailTemplateSchema, {
        404: "study not found, or no template of the study with this id",
        409: "the study has a template of this type (send its id)",
      }),
    },
    async (c) => {
      const who = managementOf(c);
      const { studyKey } = c.req.valid("param");
      await assertMessaging(db, who, "study-email-templates", studyKey);
      const template = await saveEmailTemplate(db, studyKey, c.req.valid("json"), who.subject, deps);
      return c.json({ template }, 200);
    },
  );
}
