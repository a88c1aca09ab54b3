import { createFileStore } from "@studyflow/domain/files";
import type { AppDeps } from "../../../deps";
import { registerCountResponses } from "./count-responses";
import { registerExportConfidentialResponses } from "./export-confidential-responses";
import { EXPORT_GROUP_LIST } from "./export-groups";
import { registerGetConfidentialExport } from "./get-confidential-export";
import { registerGetDailyExport } from "./get-daily-export";
import { registerGetExportTask } from "./get-export-task";
import { registerGetExportTaskResult } from "./get-export-task-result";
import { registerGetSurveyInfo } from "./get-survey-info";
import { registerListConfidentialExports } from "./list-confidential-exports";
import { registerListDailyExports } from "./list-daily-exports";
import { registerCountParticipants } from "./count-participants";
import { registerCountReports } from "./count-reports";
import { registerStartParticipantsExport } from "./start-participants-export";
import { registerStartReportsExport } from "./start-reports-export";
import { registerStartResponsesExport } from "./start-responses-export";
import { createRouter } from "../../create-router";

/**
 * case-backend's data-exporter group, at its paths and in its shapes, so case-admin's exporter pages
 * work unchanged: survey codebooks, export tasks of responses, participants and reports (counted,
 * started, followed, downloaded), daily exports, confidential responses. Mounted at
 * /v1/studies/{studyKey}/data-exporter.
 */
export function createDataExporterRouter(deps: AppDeps) {
  // mounted in the studies router, whose management auth covers it
  const router = createRouter();
  // The store the workers write export files to, configured as theirs is.
  const fileStore =
    deps.fileStore ??
    createFileStore(deps.database.db, { backend: deps.config.EXPORT_FILE_STORE, directory: deps.config.RESULT_DIR });
  registerGetSurveyInfo(router, deps);
  registerCountResponses(router, deps);
  registerStartResponsesExport(router, deps);
  registerCountParticipants(router, deps);
  registerStartParticipantsExport(router, deps);
  registerCountReports(router, deps);
  registerStartReportsExport(router, deps);
  for (const group of EXPORT_GROUP_LIST) {
    registerGetExportTask(router, deps, group);
    registerGetExportTaskResult(router, deps, group, fileStore);
  }
  registerListDailyExports(router, deps);
  registerGetDailyExport(router, deps, fileStore);
  registerExportConfidentialResponses(router, deps);
  registerListConfidentialExports(router, deps);
  registerGetConfidentialExport(router, deps);
  return router;
}
