import { readSmsTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { SMS_TEMPLATES_PERMISSION } from "../permission-texts";
import { EMPTY_TEMPLATE_NOTE, readTemplateResponses } from "../template-answers";
import { assertMessaging, messageTypeParam, smsTemplateSchema } from "../schemas";

export function registerReadSmsTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{messageType}",
      tags: ["messaging"],
      summary: "Read an SMS template (CASE)",
      description: EMPTY_TEMPLATE_NOTE + SMS_TEMPLATES_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: messageTypeParam },
      bothSlashes: true,
      responses: readTemplateResponses(smsTemplateSchema),
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "sms-templates");
      return c.json({ template: await readSmsTemplate(db, c.req.valid("param").messageType) }, 200);
    },
  );
}
