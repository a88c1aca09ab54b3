import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerReadSmsTemplate } from "./read-sms-template";
import { registerSaveSmsTemplate } from "./save-sms-template";

/** case-backend's SMS templates at /v1/messaging/sms-templates: stored and answered for case-admin; studyflow sends no SMS. */
export function createSmsTemplatesRouter(deps: AppDeps) {
  // the messaging router's auth covers this router
  const router = createRouter();
  registerSaveSmsTemplate(router, deps);
  registerReadSmsTemplate(router, deps);
  return router;
}
