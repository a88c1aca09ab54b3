import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, listSubscriptions, replaceSubscriptions } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import { caseRoute } from "../../../case-compat/case-route";
import type { AppDeps } from "../../../deps";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../../schemas";

const subscriptionSchema = z.object({ messageType: z.string().max(200), email: z.string().max(320) });

/** case-backend's notification-subscriptions: the whole list of a study's researcher subscriptions, read and replaced. */
export function registerNotificationSubscriptions(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  caseRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/notification-subscriptions",
      tags: ["studies"],
      summary: "A study's researcher notification subscriptions (CASE)",
      description:
        "Every subscription as `{messageType, email}` (`GET …/subscriptions` shows them with ids). Requires " +
        "`read-study-config` or `manage-subscriptions`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ subscriptions: z.array(subscriptionSchema) }), "the subscriptions"),
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
  caseRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/notification-subscriptions",
      tags: ["studies"],
      summary: "Replace a study's researcher notification subscriptions (CASE)",
      description:
        "The given list replaces every subscription of the study, in one transaction (audited " +
        "`subscription.replace`); addresses are stored lower-cased, a pair given twice is kept once. 400 names " +
        "the entry (`subscriptions[1].email`). Requires `update-notification-subscriptions` (`manage-subscriptions` " +
        "also grants it).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      body: z.object({
        subscriptions: z
          .array(subscriptionSchema)
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
