import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { registerAddProfile } from "./add-profile";
import { registerChangeAccountEmail } from "./change-account-email";
import { registerChangePassword } from "./change-password";
import { registerContactPreferences } from "./contact-preferences";
import { registerDeleteUser } from "./delete-user";
import { registerGetUser } from "./get-user";
import { registerPhoneNumber } from "./phone-number";
import { registerRemoveProfile } from "./remove-profile";
import { registerUnsubscribeNewsletter } from "./unsubscribe-newsletter";
import { registerUpdateProfile } from "./update-profile";
import { createRouter } from "../create-router";

/** The signed-in participant's own account under /v1/user, as case-backend's user management serves it. */
export function createUserRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  router.use(participantAuth(deps));
  registerGetUser(router, deps);
  registerAddProfile(router, deps);
  registerUpdateProfile(router, deps);
  registerRemoveProfile(router, deps);
  registerChangePassword(router, deps, limiter);
  registerChangeAccountEmail(router, deps, limiter);
  registerPhoneNumber(router);
  registerContactPreferences(router, deps);
  registerDeleteUser(router, deps, limiter);
  return router;
}

/** POST /v1/unsubscribe-newsletter: a mailed token, no sign-in. */
export function createNewsletterRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  registerUnsubscribeNewsletter(router, deps, limiter);
  return router;
}
