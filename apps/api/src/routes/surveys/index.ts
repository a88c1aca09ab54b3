import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { validationHook } from "../../validation";

/** Survey definitions of a study, managed by researchers: upload, list, fetch, unpublish. */
export function createSurveysRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(managementAuth(deps));
  return router;
}
