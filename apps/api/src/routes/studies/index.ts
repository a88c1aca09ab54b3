import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { validationHook } from "../../validation";
import { registerListRuleFailures } from "./list-rule-failures";
import { registerTrackAccount } from "./track-account";

/**
 * Settings of a study. Mounted at /v1/studies, so its auth also answers 401 to any unknown path
 * below it before a 404 would tell what exists.
 */
export function createStudiesRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(managementAuth(deps));
  registerTrackAccount(router, deps);
  registerListRuleFailures(router, deps);
  return router;
}
