import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import {
  MAX_MESSAGE_TYPE_LENGTH,
  MAX_SUBSCRIPTION_EMAIL_LENGTH,
  addSubscription,
  messageTypeProblem,
} from "@studyflow/domain/notifications";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentSubscription, subscriptionSchema } from "@studyflow/presenters/subscription";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../../schemas";

export function registerAddSubscription(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: ["subscriptions"],
      summary: "Subscribe an e-mail address to a study's notifications",
      description:
        "From then on, every NOTIFY_RESEARCHER message of the type (`*`: of any type) raised by the study's rules " +
        "is e-mailed to the address, once per message even for an address subscribed to the type and to `*`. The " +
        "address is stored trimmed and lower-cased. Subscribing again answers 200 with the existing subscription " +
        "and changes nothing. Recorded in the audit log (`subscription.add`). Requires `manage-subscriptions`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        body: jsonBody(
          z
            .strictObject({
              messageType: z
                .string()
                .min(1, { message: "messageType must not be empty", abort: true })
                .max(MAX_MESSAGE_TYPE_LENGTH, {
                  message: `messageType is longer than ${MAX_MESSAGE_TYPE_LENGTH} characters`,
                  abort: true,
                })
                .superRefine((type, ctx) => {
                  const problem = messageTypeProblem(type);
                  if (problem) ctx.addIssue({ code: "custom", message: `messageType ${problem}` });
                })
                .openapi({
                  description: "a NOTIFY_RESEARCHER message type, or `*` for every type",
                  example: "symptom-report",
                }),
              email: z
                .string()
                .trim()
                .max(MAX_SUBSCRIPTION_EMAIL_LENGTH, `email is longer than ${MAX_SUBSCRIPTION_EMAIL_LENGTH} characters`)
                .pipe(z.email("email must be an e-mail address"))
                .openapi({ format: "email", example: "study-team@example.org" }),
            })
            .openapi("SubscriptionRequest"),
        ),
      },
      responses: {
        200: jsonContent(z.object({ subscription: subscriptionSchema }), "the address was subscribed already"),
        201: jsonContent(z.object({ subscription: subscriptionSchema }), "subscribed"),
        ...errorResponses([400, 401, 403, 404], {
          400: "no or an empty, overlong or multi-line message type, or no e-mail address (the message names the field)",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-subscriptions");
      const { subscription, created } = await addSubscription(db, studyKey, c.req.valid("json"), who.subject);
      const body = { subscription: presentSubscription(subscription) };
      return created ? c.json(body, 201) : c.json(body, 200);
    },
  );
}
