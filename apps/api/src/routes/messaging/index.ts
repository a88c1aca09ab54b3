import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { createRouter } from "../create-router";
import { createEmailTemplatesRouter } from "./email-templates";
import { registerListParticipantMailTypes } from "./list-participant-mail-types";
import { createScheduledEmailsRouter } from "./scheduled-emails";
import { createSmsTemplatesRouter } from "./sms-templates";

/**
 * case-backend's messaging group (services/management-api, messaging-service.go) at /v1/messaging:
 * global and study e-mail templates, scheduled e-mails, SMS templates. Every path needs a
 * management token or API key (401 before 404); permissions are of resource type `messaging`.
 * The sub-routers are mounted in the order the OpenAPI document lists their paths.
 */
export function createMessagingRouter(deps: AppDeps) {
  const router = createRouter(managementAuth(deps));
  router.route("/email-templates", createEmailTemplatesRouter(deps));
  router.route("/sms-templates", createSmsTemplatesRouter(deps));
  router.route("/scheduled-emails", createScheduledEmailsRouter(deps));
  registerListParticipantMailTypes(router, deps);
  return router;
}
