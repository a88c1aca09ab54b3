import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { createRouter } from "../create-router";
import { registerUnsubscribeNewsletter } from "./unsubscribe-newsletter";

/** POST /v1/unsubscribe-newsletter: a mailed token, no sign-in. */
export function createNewsletterRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  registerUnsubscribeNewsletter(router, deps, limiter);
  return router;
}
