import type { AppDeps } from "../../../../deps";
import { createRouter } from "../../../create-router";
import { registerDeleteStudyEmailTemplate } from "./delete-study-email-template";
import { registerListAllStudyEmailTemplates } from "./list-all-study-email-templates";
import { registerListStudyEmailTemplates } from "./list-study-email-templates";
import { registerReadStudyEmailTemplate } from "./read-study-email-template";
import { registerSaveStudyEmailTemplate } from "./save-study-email-template";

/**
 * case-backend's study e-mail templates (messaging-service.go) at
 * /v1/messaging/email-templates/study-templates: one per study and message type, what the study's
 * own messages are written in for case-admin.
 */
export function createStudyEmailTemplatesRouter(deps: AppDeps) {
  // the messaging router's auth covers this router
  const router = createRouter();
  registerListAllStudyEmailTemplates(router, deps);
  registerListStudyEmailTemplates(router, deps);
  registerSaveStudyEmailTemplate(router, deps);
  registerReadStudyEmailTemplate(router, deps);
  registerDeleteStudyEmailTemplate(router, deps);
  return router;
}
