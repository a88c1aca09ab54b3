import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { createRouter } from "../create-router";
import { createCodeListsRouter } from "./code-lists";
import { createDataExplorerRouter } from "./data-explorer";
import { createDataExporterRouter } from "./data-exporter";
import { createExportConfigRouter } from "./export-config";
import { createParticipantsRouter } from "./participants";
import { createRunActionsRouter } from "./run-actions";
import { createSurveysRouter } from "./surveys";
import { registerCreateStudy } from "./create-study";
import { createDailyExportConfigRouter } from "./daily-export-config";
import { registerDeleteStudy } from "./delete-study";
import { registerGetParticipantCounts } from "./get-participant-counts";
import { registerGetStudy } from "./get-study";
import { registerListAuditLog } from "./list-audit-log";
import { registerListMessages } from "./list-messages";
import { registerListRuleFailures } from "./list-rule-failures";
import { registerListStudies } from "./list-studies";
import { createMessageTemplatesRouter } from "./message-templates";
import { registerNotificationSubscriptions } from "./notification-subscriptions";
import { registerStudyPermissions } from "./permissions";
import { createRulesRouter } from "./rules";
import { registerSetDisplayProps } from "./set-display-props";
import { registerSetFileUploadConfig } from "./set-file-upload-config";
import { registerSetIsDefault } from "./set-is-default";
import { registerSetStudyStatus } from "./set-study-status";
import { registerSetTrackAccount } from "./set-track-account";
import { createStudyCodeListRouter } from "./study-code-list";
import { createStudyCountersRouter } from "./study-counters";
import { createSubscriptionsRouter } from "./subscriptions";
import { createTaskRetentionRouter } from "./task-retention";
import { createTimerRouter } from "./timer";
import { registerUpdateStudy } from "./update-study";
import { createVariablesRouter } from "./variables";

/**
 * Studies and everything below /v1/studies/{studyKey}: participants, tasks, surveys, the data
 * exporter and explorer, properties and status, code lists, variables, rules versions, the audit log. Mounted at /v1/studies, so its auth also answers 401 to any unknown path below
 * it before a 404 would tell what exists; the sub-routers mounted here are covered by it.
 */
export function createStudiesRouter(deps: AppDeps) {
  const router = createRouter(managementAuth(deps));
  // A study's participants, tasks, surveys and data, first: registered before the study's own
  // operations as they always were (the OpenAPI document lists them in this order).
  router.route("/:studyKey/participants", createParticipantsRouter(deps));
  router.route("/:studyKey/run-actions", createRunActionsRouter(deps));
  router.route("/:studyKey/surveys", createSurveysRouter(deps));
  router.route("/:studyKey/data-exporter", createDataExporterRouter(deps));
  router.route("/:studyKey/data-explorer", createDataExplorerRouter(deps));
  router.route("/:studyKey/export-config", createExportConfigRouter(deps));
  registerListStudies(router, deps);
  registerGetStudy(router, deps);
  registerGetParticipantCounts(router, deps);
  registerUpdateStudy(router, deps);
  registerSetTrackAccount(router, deps);
  router.route("/:studyKey/daily-export-config", createDailyExportConfigRouter(deps));
  router.route("/:studyKey/task-retention", createTaskRetentionRouter(deps));
  registerListRuleFailures(router, deps);
  registerListAuditLog(router, deps);
  registerListMessages(router, deps);
  // case-admin's study routes (CASE §3a)
  registerCreateStudy(router, deps);
  registerDeleteStudy(router, deps);
  registerSetStudyStatus(router, deps);
  registerSetDisplayProps(router, deps);
  registerSetIsDefault(router, deps);
  registerSetFileUploadConfig(router, deps);
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
