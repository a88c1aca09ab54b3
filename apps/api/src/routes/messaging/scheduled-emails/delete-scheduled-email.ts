import { deleteScheduledEmail } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY, messageSchema } from "../../schemas";
import { SCHEDULED_EMAILS_PERMISSION } from "../permission-texts";
import { assertMessaging, scheduleIdParam } from "../schemas";

export function registerDeleteScheduledEmail(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{id}",
      tags: ["messaging"],
      summary: "Delete a scheduled e-mail (CASE)",
      description:
        "Answers the same whether or not the schedule existed, as case-backend does; a deletion is audited " +
        "(`scheduled-email.delete`). " +
        SCHEDULED_EMAILS_PERMISSION,
      security: MANAGEMENT_SECURITY,
      request: { params: scheduleIdParam },
      bothSlashes: true,
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
