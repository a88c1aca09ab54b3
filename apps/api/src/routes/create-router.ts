import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { validationHook } from "../validation";

/** A router of the API: what route files declare their operations on (see define-route.ts). */
export type ApiRouter = OpenAPIHono<AppEnv>;

/**
 * A router of the API (the app itself included): a request that fails its route's schema is
 * answered by validationHook, a 400 naming the field, on every route alike. `auth`, when given,
 * runs for every path below the router's mount point, an unknown one too (401 before 404, so an
 * unauthenticated caller learns nothing of what exists). Routers whose operations differ in auth
 * (sign-in and sign-up beside signed-in operations) give none and set it per operation
 * (`middleware` of defineRoute).
 */
export function createRouter(auth?: MiddlewareHandler<AppEnv>): ApiRouter {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  if (auth) router.use(auth);
  return router;
}
