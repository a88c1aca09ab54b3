import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";
import { registerGetRulesVersion } from "./get-rules-version";
import { registerListRulesVersions } from "./list-rules-versions";
import { registerSetRules } from "./set-rules";

/** A study's rules versions; mounted below the studies router, whose auth covers it. */
export function createRulesRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerListRulesVersions(router, deps);
  registerGetRulesVersion(router, deps);
  registerSetRules(router, deps);
  return router;
}
