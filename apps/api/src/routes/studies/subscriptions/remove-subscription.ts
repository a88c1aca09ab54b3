import { assertStudyPermission } from "@studyflow/domain/access";
import { removeSubscription } from "@studyflow/domain/notifications";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { subscriptionParams } from "./subscription-params";

export function registerRemoveSubscription(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{id}",
      tags: ["subscriptions"],
      summary: "Remove a subscription",
      description:
        "The address receives no more notifications through it; e-mails already queued are still sent. Recorded " +
        "in the audit log (`subscription.remove`, with type and address). Requires `manage-subscriptions`.",
      security: MANAGEMENT_SECURITY,
      request: { params: subscriptionParams },
      responses: {
        204: { description: "subscription removed" },
        ...errorResponses([400, 401, 403, 404], {
          404: "study not found, or no subscription of the study has this id",
        }),
      },
    },
    async (c) => {
      const { studyKey, id } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-subscriptions");
      await removeSubscription(db, studyKey, Number(id), who.subject);
      return c.body(null, 204);
    },
  );
}
