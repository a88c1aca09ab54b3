import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { replaceSubscriptions } from "@studyflow/domain/notifications";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../../schemas";
import { notificationSubscriptionSchema } from "./notification-subscription-schema";

/** case-backend's notification-subscriptions, replaced: the whole list of a study's researcher subscriptions at once. */
export function registerReplaceNotificationSubscriptions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/notification-subscriptions",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Replace a study's researcher notification subscriptions (CASE)",
      description:
        "The given list replaces every subscription of the study, in one transaction (audited " +
        "`subscription.replace`); addresses are stored lower-cased, a pair given twice is kept once. 400 names " +
        "the entry (`subscriptions[1].email`). Requires `update-notification-subscriptions` (`manage-subscriptions` " +
        "also grants it).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({
        subscriptions: z
          .array(notificationSubscriptionSchema)
          .nullish()
          .transform((list) => list ?? []),
      }),
      responses: {
        200: jsonContent(messageSchema, "the list is replaced"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-notification-subscriptions");
      await replaceSubscriptions(db, studyKey, c.req.valid("json").subscriptions, who.subject);
      return c.json({ message: "notification subscriptions updated" }, 200);
    },
  );
}
