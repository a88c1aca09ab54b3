import { ExplorerPageCache } from "@studyflow/domain/data-explorer";
import { createFileStore } from "@studyflow/domain/files";
import type { AppDeps } from "../../../deps";
import { registerDeleteResponse } from "./delete-response";
import { registerDeleteResponses } from "./delete-responses";
import { registerGetParticipant } from "./get-participant";
import { registerGetReport } from "./get-report";
import { registerGetResponse } from "./get-response";
import { registerListParticipants } from "./list-participants";
import { registerListReportKeys } from "./list-report-keys";
import { registerListReports } from "./list-reports";
import { registerListResponses } from "./list-responses";
import { registerDeleteParticipantFile } from "./delete-participant-file";
import { registerGetParticipantFile } from "./get-participant-file";
import { registerListParticipantFiles } from "./list-participant-files";
import { createRouter } from "../../create-router";

/**
 * case-backend's data-explorer group at its paths and in its shapes, so case-admin's explorer pages
 * work unchanged: a study's responses (flat, as exported), participants and reports, paged and
 * filtered as CASE pages and filters them, the deletes of responses, and the files participants
 * uploaded (list, download, delete). Mounted at
 * /v1/studies/{studyKey}/data-explorer.
 */
export function createDataExplorerRouter(deps: AppDeps) {
  // mounted in the studies router, whose management auth covers it
  const router = createRouter();
  // one per app: page boundaries and counts of the explorer's queries (see ExplorerPageCache)
  const cache = new ExplorerPageCache({ clock: deps.clock });
  registerListResponses(router, deps, cache);
  registerDeleteResponses(router, deps, cache);
  registerGetResponse(router, deps);
  registerDeleteResponse(router, deps, cache);
  registerListParticipants(router, deps, cache);
  registerGetParticipant(router, deps);
  // before /reports/{reportID}, which would take "keys" for an id
  registerListReportKeys(router, deps);
  registerListReports(router, deps, cache);
  registerGetReport(router, deps);
  // participant uploads live in the shared file store, as export files do
  const fileStore =
    deps.fileStore ??
    createFileStore(deps.database.db, { backend: deps.config.EXPORT_FILE_STORE, directory: deps.config.RESULT_DIR });
  registerListParticipantFiles(router, deps);
  registerGetParticipantFile(router, deps, fileStore);
  registerDeleteParticipantFile(router, deps, fileStore);
  return router;
}
