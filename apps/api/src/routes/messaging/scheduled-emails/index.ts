import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerDeleteScheduledEmail } from "./delete-scheduled-email";
import { registerListScheduledEmails } from "./list-scheduled-emails";
import { registerReadScheduledEmail } from "./read-scheduled-email";
import { registerSaveScheduledEmail } from "./save-scheduled-email";

/**
 * case-backend's scheduled e-mails at /v1/messaging/scheduled-emails: a template sent to accounts
 * from `nextTime` every `period` seconds until `until`, by one cluster-wide worker job
 * (fireDueScheduledEmails).
 */
export function createScheduledEmailsRouter(deps: AppDeps) {
  // the messaging router's auth covers this router
  const router = createRouter();
  registerListScheduledEmails(router, deps);
  registerSaveScheduledEmail(router, deps);
  registerReadScheduledEmail(router, deps);
  registerDeleteScheduledEmail(router, deps);
  return router;
}
