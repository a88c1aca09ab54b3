import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { createCodeListsRouter } from "./code-lists";
import { createMessageTemplatesRouter } from "./message-templates";
import { createSubscriptionsRouter } from "./subscriptions";
import { createTimerRouter } from "./timer";
import { registerDailyExportConfig } from "./daily-export-config";
import { registerGetParticipantCounts } from "./get-participant-counts";
import { registerGetStudy } from "./get-study";
import { registerListAuditLog } from "./list-audit-log";
import { registerListMessages } from "./list-messages";
import { registerListRuleFailures } from "./list-rule-failures";
import { registerListStudies } from "./list-studies";
import { createRulesRouter } from "./rules";
import { registerTaskRetention } from "./task-retention";
import { registerTrackAccount } from "./track-account";
import { registerUpdateStudy } from "./update-study";
import { createVariablesRouter } from "./variables";
import { createStudyCodeListRouter } from "./study-code-list";
import { createStudyCountersRouter } from "./study-counters";
// case-admin's study routes (CASE §3a)
import { registerCreateStudy } from "./create-study";
import { registerDeleteStudy } from "./delete-study";
import { registerDisplayProps } from "./display-props";
import { registerFileUploadConfig } from "./file-upload-config";
import { registerIsDefault } from "./is-default";
import { registerNotificationSubscriptions } from "./notification-subscriptions";
import { registerStudyPermissions } from "./study-permissions";
import { registerStudyStatus } from "./study-status";
import { createRouter } from "../create-router";

/**
 * Studies and their configuration: properties and status, code lists, variables, rules versions,
 * the audit log. Mounted at /v1/studies, so its auth also answers 401 to any unknown path below
 * it before a 404 would tell what exists; the sub-routers mounted here are covered by it.
 */
export function createStudiesRouter(deps: AppDeps) {
  const router = createRouter();
  router.use(managementAuth(deps));
  registerListStudies(router, deps);
  registerGetStudy(router, deps);
  registerGetParticipantCounts(router, deps);
  registerUpdateStudy(router, deps);
  registerTrackAccount(router, deps);
  registerDailyExportConfig(router, deps);
  registerTaskRetention(router, deps);
  registerListRuleFailures(router, deps);
  registerListAuditLog(router, deps);
  registerListMessages(router, deps);
  // case-admin's study routes (CASE §3a)
  registerCreateStudy(router, deps);
  registerDeleteStudy(router, deps);
  registerStudyStatus(router, deps);
  registerDisplayProps(router, deps);
  registerIsDefault(router, deps);
  registerFileUploadConfig(router, deps);
  registerNotificationSubscriptions(router, deps);
  registerStudyPermissions(router, deps);
  router.route("/:studyKey/code-lists", createCodeListsRouter(deps));
  router.route("/:studyKey/variables", createVariablesRouter(deps));
  router.route("/:studyKey/study-code-list", createStudyCodeListRouter(deps));
  router.route("/:studyKey/study-counters", createStudyCountersRouter(deps));
  router.route("/:studyKey/rules", createRulesRouter(deps));
  router.route("/:studyKey/timer", createTimerRouter(deps));
  router.route("/:studyKey/message-templates", createMessageTemplatesRouter(deps));
  router.route("/:studyKey/subscriptions", createSubscriptionsRouter(deps));
  return router;
}
