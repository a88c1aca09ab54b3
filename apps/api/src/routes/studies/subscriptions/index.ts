import type { AppDeps } from "../../../deps";
import { registerAddSubscription } from "./add-subscription";
import { registerListSubscriptions } from "./list-subscriptions";
import { registerRemoveSubscription } from "./remove-subscription";
import { createRouter } from "../../create-router";

/** Researchers subscribed to the study's notifications; mounted below the studies router, whose auth covers it. */
export function createSubscriptionsRouter(deps: AppDeps) {
  const router = createRouter();
  registerListSubscriptions(router, deps);
  registerAddSubscription(router, deps);
  registerRemoveSubscription(router, deps);
  return router;
}
