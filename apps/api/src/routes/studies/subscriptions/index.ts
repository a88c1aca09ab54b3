import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";
import { registerAddSubscription } from "./add-subscription";
import { registerListSubscriptions } from "./list-subscriptions";
import { registerRemoveSubscription } from "./remove-subscription";

/** Researchers subscribed to the study's notifications; mounted below the studies router, whose auth covers it. */
export function createSubscriptionsRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerListSubscriptions(router, deps);
  registerAddSubscription(router, deps);
  registerRemoveSubscription(router, deps);
  return router;
}
