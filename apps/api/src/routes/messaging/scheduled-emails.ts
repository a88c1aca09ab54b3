import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { deleteScheduledEmail, listScheduledEmails, readScheduledEmail, saveScheduledEmail } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY, messageSchema } from "../schemas";
import { assertMessaging, scheduleIdParam, scheduledEmailBody, scheduledEmailSchema } from "./schemas";

const PERMISSION = "Requires permission `messaging/scheduled-emails/*` (admins always pass).";
const scheduleAnswer = z.object({ schedule: scheduledEmailSchema });

/**
 * case-backend's scheduled e-mails: a template sent to accounts from `nextTime` every `period`
 * seconds until `until`, by one cluster-wide worker job (fireDueScheduledEmails).
 */
export function registerScheduledEmails(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const nowSeconds = () => Math.floor((deps.clock ?? Date.now)() / 1000);

  caseRoute(
    router,
    {
      method: "get",
      path: "/scheduled-emails",
      tags: ["messaging"],
      summary: "List the scheduled e-mails (CASE)",
      description: PERMISSION,
      security: MANAGEMENT_SECURITY,
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

  caseRoute(
    router,
    {
      method: "post",
      path: "/scheduled-emails",
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
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      body: scheduledEmailBody,
      responses: {
        200: jsonContent(scheduleAnswer, "the saved schedule"),
        ...errorResponses([400, 401, 403, 404], { 404: "no schedule with this id, or the study is unknown" }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "scheduled-emails");
      const schedule = await saveScheduledEmail(db, c.req.valid("json"), who.subject, nowSeconds());
      return c.json({ schedule }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/scheduled-emails/{id}",
      tags: ["messaging"],
      summary: "Read a scheduled e-mail (CASE)",
      description: PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: scheduleIdParam },
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

  caseRoute(
    router,
    {
      method: "delete",
      path: "/scheduled-emails/{id}",
      tags: ["messaging"],
      summary: "Delete a scheduled e-mail (CASE)",
      description:
        "Answers the same whether or not the schedule existed, as case-backend does; a deletion is audited " +
        "(`scheduled-email.delete`). " +
        PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: scheduleIdParam },
      responses: {
        200: jsonContent(messageSchema, '`{"message": "schedule deleted"}`'),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertMessaging(db, who, "scheduled-emails");
      await deleteScheduledEmail(db, c.req.valid("param").id, who.subject);
      return c.json({ message: "schedule deleted" }, 200);
    },
  );
}
