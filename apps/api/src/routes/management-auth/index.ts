import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";
import { registerExtendSession } from "./extend-session";
import { registerMyPermissions } from "./permissions";
import { registerRenewToken } from "./renew-token";
import { registerSignInWithIdp } from "./signin-with-idp";

/** One operation of this router: a file of this folder exporting it (`registerSignInWithIdp`, …). */
export type ManagementAuthOperation = (router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) => void;

/** The operations, in registration order: a new one is a file here and one line in this list. */
const OPERATIONS: readonly ManagementAuthOperation[] = [
  registerSignInWithIdp,
  registerExtendSession,
  registerRenewToken,
  registerMyPermissions,
];

/**
 * case-backend's management sign-in routes (services/management-api, management-auth.go) under
 * /v1/auth, beside the participant sign-in routes mounted at the same prefix: their paths differ
 * (signin-with-idp, extend-session, renew-token/…, permissions), so neither router shadows the
 * other. Auth is per route here (`middleware: [managementAuth(deps)]` in caseRoute), never
 * `router.use`: a router-wide middleware would run for the participant routes too.
 */
export function createManagementAuthRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  for (const register of OPERATIONS) register(router, deps, limiter);
  return router;
}
