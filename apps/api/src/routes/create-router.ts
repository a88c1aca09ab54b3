import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { validationHook } from "../validation";

/**
 * A router of the API (the app itself included): a request that fails its route's schema is
 * answered by validationHook, a 400 naming the field, on every route alike.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
