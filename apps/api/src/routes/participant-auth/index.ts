import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";
import { registerLogin } from "./login";
import { registerLogout } from "./logout";
import { registerOtp } from "./otp";
import { registerRenew } from "./renew";
import { registerSignup } from "./signup";
import { registerTempToken } from "./temp-token";
import { registerVerifyEmail } from "./verify-email";

/**
 * case-backend's participant sign-in routes under /v1/auth: sign-up, login, renewal, logout, e-mail
 * OTP, address verification and survey-link sign-in. Each route brings its own auth (most are public).
 */
export function createParticipantAuthRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerSignup(router, deps, limiter);
  registerLogin(router, deps, limiter);
  registerRenew(router, deps, limiter);
  registerLogout(router, deps);
  registerOtp(router, deps, limiter);
  registerVerifyEmail(router, deps, limiter);
  registerTempToken(router, deps, limiter);
  return router;
}
