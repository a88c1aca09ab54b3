import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { createRouter } from "../create-router";
import { registerExtendSession } from "./extend-session";
import { registerGetRenewToken } from "./get-renew-token";
import { registerLogin } from "./login";
import { registerLoginWithTempToken } from "./login-with-temptoken";
import { registerLogout } from "./logout";
import { registerMyPermissions } from "./permissions";
import { registerRenewSessionTokens } from "./renew-session-tokens";
import { registerRequestOtp } from "./request-otp";
import { registerResendEmailVerification } from "./resend-email-verification";
import { registerRevokeTokens } from "./revoke-tokens";
import { registerSignInWithIdp } from "./signin-with-idp";
import { registerSignup } from "./signup";
import { registerTempTokenInfo } from "./temptoken-info";
import { registerValidateToken } from "./validate-token";
import { registerVerifyEmail } from "./verify-email";
import { registerVerifyOtp } from "./verify-otp";

/**
 * Sign-in under /v1/auth: case-backend's participant routes (sign-up, login, renewal, logout,
 * e-mail OTP, address verification, survey-link sign-in) and its management routes
 * (services/management-api, management-auth.go: signin-with-idp, extend-session, renew-token,
 * permissions). The router has no common auth: most participant routes are public, the others
 * take a participant or a management token, so each operation brings its own.
 */
export function createAuthRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = createRouter();
  registerSignup(router, deps, limiter);
  registerLogin(router, deps, limiter);
  registerRenewSessionTokens(router, deps, limiter);
  registerLogout(router, deps);
  registerValidateToken(router, deps);
  registerRevokeTokens(router, deps);
  // One for both OTP routes: the token the app's code page sends to each is verified (and an
  // external provider's keys fetched) once.
  const otpAuth = participantAuth(deps);
  registerRequestOtp(router, deps, otpAuth);
  registerVerifyOtp(router, deps, limiter, otpAuth);
  registerVerifyEmail(router, deps, limiter);
  registerResendEmailVerification(router, deps);
  registerTempTokenInfo(router, deps, limiter);
  registerLoginWithTempToken(router, deps, limiter);
  registerSignInWithIdp(router, deps, limiter);
  registerExtendSession(router, deps);
  registerGetRenewToken(router, deps);
  registerMyPermissions(router, deps);
  return router;
}
