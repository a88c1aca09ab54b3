import { readScheduledEmail } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../../schemas";
import { SCHEDULED_EMAILS_PERMISSION } from "../permission-texts";
import { assertMessaging, scheduleIdParam } from "../schemas";
import { scheduleAnswer } from "./scheduled-email-answer";

export function registerReadScheduledEmail(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{id}",
      tags: ["messaging"],
      summary: "Read a scheduled e-mail (CASE)",
      description: SCHEDULED_EMAILS_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: scheduleIdParam },
      bothSlashes: true,
      responses: {
        200: jsonContent(scheduleAnswer, "the schedule"),
        ...errorResponses([400, 401, 403, 404], { 404: "no schedule with this id" }),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "scheduled-emails");
      return c.json({ schedule: await readScheduledEmail(db, c.req.valid("param").id) }, 200);
    },
  );
}
