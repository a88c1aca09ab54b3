import { z } from "@hono/zod-openapi";
import { listScheduledEmails } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../../schemas";
import { SCHEDULED_EMAILS_PERMISSION } from "../permission-texts";
import { assertMessaging, scheduledEmailSchema } from "../schemas";

export function registerListScheduledEmails(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["messaging"],
      summary: "List the scheduled e-mails (CASE)",
      description: SCHEDULED_EMAILS_PERMISSION,
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ schedules: z.array(scheduledEmailSchema) }), "the schedules, next first"),
        ...errorResponses([401, 403]),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "scheduled-emails");
      return c.json({ schedules: await listScheduledEmails(db) }, 200);
    },
  );
}
