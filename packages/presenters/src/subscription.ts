import { z } from "@hono/zod-openapi";
import type { ResearcherSubscription } from "@studyflow/domain/notifications";

export const subscriptionSchema = z
  .object({
    id: z.string().openapi({ description: "the subscription's id, for DELETE …/subscriptions/{id}", example: "12" }),
    messageType: z
      .string()
      .openapi({ description: "the NOTIFY_RESEARCHER message type; `*` for every type", example: "symptom-report" }),
    email: z.string().openapi({ format: "email", example: "study-team@example.org" }),
    createdBy: z.string().openapi({ description: "the management subject who added it" }),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("ResearcherSubscription");

export function presentSubscription(subscription: ResearcherSubscription): z.infer<typeof subscriptionSchema> {
  return {
    id: String(subscription.id),
    messageType: subscription.messageType,
    email: subscription.email,
    createdBy: subscription.createdBy,
    createdAt: subscription.createdAt.toISOString(),
  };
}
