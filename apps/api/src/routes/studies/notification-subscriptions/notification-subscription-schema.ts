import { z } from "@hono/zod-openapi";

/** A researcher's subscription as case-backend's notification-subscriptions lists it: no id. */
export const notificationSubscriptionSchema = z.object({
  messageType: z.string().max(200),
  email: z.string().max(320),
});
