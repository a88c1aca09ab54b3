import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listSubscriptions } from "@studyflow/domain/notifications";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { notificationSubscriptionSchema } from "./notification-subscription-schema";

/** case-backend's notification-subscriptions, read: every researcher subscription of a study. */
export function registerListNotificationSubscriptions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/notification-subscriptions",
      bothSlashes: true,
      tags: ["studies"],
      summary: "A study's researcher notification subscriptions (CASE)",
      description:
        "Every subscription as `{messageType, email}` (`GET …/subscriptions` shows them with ids). Requires " +
        "`read-study-config` or `manage-subscriptions`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ subscriptions: z.array(notificationSubscriptionSchema) }), "the subscriptions"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-subscriptions"]);
      const rows = await listSubscriptions(db, studyKey);
      return c.json({ subscriptions: rows.map(({ messageType, email }) => ({ messageType, email })) }, 200);
    },
  );
}
