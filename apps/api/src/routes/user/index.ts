import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { createRouter } from "../create-router";
import { registerAddProfile } from "./add-profile";
import { registerChangeAccountEmail } from "./change-account-email";
import { registerChangePassword } from "./change-password";
import { registerChangePhoneNumber } from "./change-phone-number";
import { registerDeleteAttribute } from "./delete-attribute";
import { registerDeleteUser } from "./delete-user";
import { registerGetUser } from "./get-user";
import { registerListAttributes } from "./list-attributes";
import { registerRemoveProfile } from "./remove-profile";
import { registerRequestPhoneNumberVerification } from "./request-phone-number-verification";
import { registerSetAttribute } from "./set-attribute";
import { registerUpdateContactPreferences } from "./update-contact-preferences";
import { registerUpdatePreferredLanguage } from "./update-preferred-language";
import { registerUpdateProfile } from "./update-profile";

/** The signed-in participant's own account under /v1/user, as case-backend's user management serves it. */
export function createUserRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter(participantAuth(deps));
  registerGetUser(router, deps);
  registerAddProfile(router, deps);
  registerUpdateProfile(router, deps);
  registerRemoveProfile(router, deps);
  registerChangePassword(router, deps, limiter);
  registerChangeAccountEmail(router, deps, limiter);
  registerChangePhoneNumber(router);
  registerRequestPhoneNumberVerification(router);
  registerUpdateContactPreferences(router, deps);
  registerUpdatePreferredLanguage(router, deps);
  registerListAttributes(router, deps);
  registerSetAttribute(router, deps);
  registerDeleteAttribute(router, deps);
  registerDeleteUser(router, deps, limiter);
  return router;
}
