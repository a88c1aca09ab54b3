import type { AppDeps } from "../../../deps";
import { registerDeleteMessageTemplate } from "./delete-message-template";
import { registerGetMessageTemplate } from "./get-message-template";
import { registerListMessageTemplates } from "./list-message-templates";
import { registerSetMessageTemplate } from "./set-message-template";
import { createRouter } from "../../create-router";

/** E-mail templates of participant messages, per message type and language; mounted below the studies router, whose auth covers it. */
export function createMessageTemplatesRouter(deps: AppDeps) {
  const router = createRouter();
  registerListMessageTemplates(router, deps);
  registerGetMessageTemplate(router, deps);
  registerSetMessageTemplate(router, deps);
  registerDeleteMessageTemplate(router, deps);
  return router;
}
