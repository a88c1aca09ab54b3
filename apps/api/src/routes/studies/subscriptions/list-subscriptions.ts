import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listSubscriptions } from "@studyflow/domain/notifications";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentSubscription, subscriptionSchema } from "@studyflow/presenters/subscription";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerListSubscriptions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["subscriptions"],
      summary: "Researchers subscribed to a study's notifications",
      description:
        "Who receives the study's NOTIFY_RESEARCHER messages by e-mail, by message type (`*`: every type), then " +
        "address. Requires `manage-subscriptions`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ subscriptions: z.array(subscriptionSchema) }), "the study's subscriptions"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-subscriptions");
      const subscriptions = await listSubscriptions(db, studyKey);
      return c.json({ subscriptions: subscriptions.map(presentSubscription) }, 200);
    },
  );
}
