import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { validationHook } from "../../../validation";
import { registerDeleteMessageTemplate } from "./delete-message-template";
import { registerGetMessageTemplate } from "./get-message-template";
import { registerListMessageTemplates } from "./list-message-templates";
import { registerSetMessageTemplate } from "./set-message-template";

/** E-mail templates of participant messages, per message type and language; mounted below the studies router, whose auth covers it. */
export function createMessageTemplatesRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerListMessageTemplates(router, deps);
  registerGetMessageTemplate(router, deps);
  registerSetMessageTemplate(router, deps);
  registerDeleteMessageTemplate(router, deps);
  return router;
}
