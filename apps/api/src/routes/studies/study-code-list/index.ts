import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";
import { registerAddCodes } from "./add-codes";
import { registerListCodes } from "./list-codes";
import { registerListCodeListKeys } from "./list-keys";
import { registerRemoveCodes } from "./remove-codes";

/**
 * A study's code lists as case-backend serves them (case-admin's study configurator): list keys,
 * pages of codes, adding and removing. studyflow's own /code-lists routes serve the same lists.
 * Mounted below the studies router, whose auth covers it.
 */
export function createStudyCodeListRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerListCodeListKeys(router, deps);
  registerListCodes(router, deps);
  registerAddCodes(router, deps);
  registerRemoveCodes(router, deps);
  return router;
}
