import { saveScheduledEmail } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../../schemas";
import { SCHEDULED_EMAILS_PERMISSION } from "../permission-texts";
import { assertMessaging, scheduledEmailBody } from "../schemas";
import { scheduleAnswer } from "./scheduled-email-answer";

export function registerSaveScheduledEmail(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: ["messaging"],
      summary: "Save a scheduled e-mail (CASE)",
      description:
        'Without `id` (or with `""`) a new schedule; with `id`, a replacement of it (404 if unknown). The ' +
        "template is checked as e-mail templates are (400 naming `template.translations[i].templateDef`). `until` " +
        "(Unix seconds, 0: no end) must not be in the past nor before `nextTime`. studyflow differences: " +
        "`period` must be positive; `study-participants` needs a known `studyKey` (404); a `condition` is " +
        "refused (400) as studyflow does not evaluate it. A mail that its recipient's data takes past the limits " +
        "on a template's work when the slot fires is not sent: its outbox row is failed with the reason. Audited " +
        "`scheduled-email.save`. " +
        SCHEDULED_EMAILS_PERMISSION,
      security: MANAGEMENT_SECURITY,
      caseBody: scheduledEmailBody,
      bothSlashes: true,
      responses: {
        200: jsonContent(scheduleAnswer, "the saved schedule"),
        ...errorResponses([400, 401, 403, 404], { 404: "no schedule with this id, or the study is unknown" }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "scheduled-emails");
      const schedule = await saveScheduledEmail(db, c.req.valid("json"), who.subject, deps);
      return c.json({ schedule }, 200);
    },
  );
}
