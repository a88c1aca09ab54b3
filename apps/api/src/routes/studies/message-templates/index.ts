import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";

/** E-mail templates of participant messages, per message type and language; mounted below the studies router, whose auth covers it. */
export function createMessageTemplatesRouter(_deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  return router;
}
