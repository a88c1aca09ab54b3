import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";
import { registerDeleteVariable } from "./delete-variable";
import { registerGetVariable } from "./get-variable";
import { registerListVariables } from "./list-variables";
import { registerSetVariable } from "./set-variable";

/** A study's variables; mounted below the studies router, whose auth covers it. */
export function createVariablesRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerListVariables(router, deps);
  registerGetVariable(router, deps);
  registerSetVariable(router, deps);
  registerDeleteVariable(router, deps);
  return router;
}
