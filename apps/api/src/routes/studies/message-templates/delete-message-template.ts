import { assertStudyPermission } from "@studyflow/domain/access";
import { deleteMessageTemplate } from "@studyflow/domain/messages";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { templateParams } from "./template-params";

export function registerDeleteMessageTemplate(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{messageType}/{language}",
      tags: ["message-templates"],
      summary: "Delete a message template",
      description:
        "Participants then read the type's template in another language; once the type has none left, nothing of " +
        "the type is sent: its scheduled messages fail when due, SEND_MESSAGE_NOW fails as a rule failure, and " +
        "messages already queued fail at delivery (each a failed outbox row saying why). " +
        "Recorded in the audit log (`message-template.delete`, with its last text). Requires `manage-message-templates`.",
      security: MANAGEMENT_SECURITY,
      request: { params: templateParams },
      responses: {
        204: { description: "template deleted" },
        ...errorResponses([400, 401, 403, 404], { 404: "study or template not found" }),
      },
    },
    async (c) => {
      const { studyKey, messageType, language } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-message-templates");
      await deleteMessageTemplate(db, { studyKey, messageType, language }, who.subject);
      return c.body(null, 204);
    },
  );
}
