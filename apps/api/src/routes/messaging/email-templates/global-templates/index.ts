import type { AppDeps } from "../../../../deps";
import { createRouter } from "../../../create-router";
import { registerDeleteGlobalEmailTemplate } from "./delete-global-email-template";
import { registerListGlobalEmailTemplates } from "./list-global-email-templates";
import { registerReadGlobalEmailTemplate } from "./read-global-email-template";
import { registerSaveGlobalEmailTemplate } from "./save-global-email-template";

/**
 * case-backend's global e-mail templates (messaging-service.go) at
 * /v1/messaging/email-templates/global-templates: the templates of no study (registration,
 * password reset, newsletters…), one per message type.
 */
export function createGlobalEmailTemplatesRouter(deps: AppDeps) {
  // the messaging router's auth covers this router
  const router = createRouter();
  registerListGlobalEmailTemplates(router, deps);
  registerSaveGlobalEmailTemplate(router, deps);
  registerReadGlobalEmailTemplate(router, deps);
  registerDeleteGlobalEmailTemplate(router, deps);
  return router;
}
