import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { createGlobalEmailTemplatesRouter } from "./global-templates";
import { createStudyEmailTemplatesRouter } from "./study-templates";

/** case-backend's e-mail templates at /v1/messaging/email-templates: the global ones and each study's. */
export function createEmailTemplatesRouter(deps: AppDeps) {
  // the messaging router's auth covers this router
  const router = createRouter();
  router.route("/global-templates", createGlobalEmailTemplatesRouter(deps));
  router.route("/study-templates", createStudyEmailTemplatesRouter(deps));
  return router;
}
