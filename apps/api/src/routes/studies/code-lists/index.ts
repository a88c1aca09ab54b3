import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";
import { registerAddCodes } from "./add-codes";
import { registerCountCodes } from "./count-codes";
import { registerListCodeLists } from "./list-code-lists";
import { registerListCodes } from "./list-codes";
import { registerRemoveCode } from "./remove-code";

/** A study's code lists; mounted below the studies router, whose auth covers it. */
export function createCodeListsRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerListCodeLists(router, deps);
  registerAddCodes(router, deps);
  registerListCodes(router, deps);
  registerCountCodes(router, deps);
  registerRemoveCode(router, deps);
  return router;
}
