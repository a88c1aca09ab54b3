import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { registerGlobalEmailTemplates } from "./global-email-templates";
import { registerParticipantMailTypes } from "./participant-mail-types";
import { registerScheduledEmails } from "./scheduled-emails";
import { registerSmsTemplates } from "./sms-templates";
import { registerStudyEmailTemplates } from "./study-email-templates";
import { createRouter } from "../create-router";

/** One operation of this router: a file of this folder exporting it (`registerListGlobalTemplates`, …). */
export type MessagingOperation = (router: OpenAPIHono<AppEnv>, deps: AppDeps) => void;

/**
 * The operations, in registration order: a new one is a file here and one line in this list.
 */
const OPERATIONS: readonly MessagingOperation[] = [
  registerGlobalEmailTemplates,
  registerStudyEmailTemplates,
  registerSmsTemplates,
  registerScheduledEmails,
  registerParticipantMailTypes,
];

/**
 * case-backend's messaging group (services/management-api, messaging-service.go) at /v1/messaging:
 * global and study e-mail templates, scheduled e-mails, SMS templates. Every path needs a
 * management token or API key (401 before 404); permissions are of resource type `messaging`.
 */
export function createMessagingRouter(deps: AppDeps) {
  const router = createRouter();
  router.use(managementAuth(deps));
  for (const register of OPERATIONS) register(router, deps);
  return router;
}
