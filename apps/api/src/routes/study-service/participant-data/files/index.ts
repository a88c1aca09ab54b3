import { createFileStore } from "@studyflow/domain/files";
import type { AppDeps } from "../../../../deps";
import type { RateLimiter } from "../../../../rate-limit";
import { createRouter } from "../../../create-router";
import { registerDeleteParticipantFile } from "./delete-file";
import { registerGetParticipantFile } from "./get-file";
import { registerListParticipantFiles } from "./list-files";
import { registerUploadParticipantFile } from "./upload-file";

export { isParticipantFileUpload, UPLOAD_FORM_OVERHEAD_BYTES } from "./upload-file";

/**
 * case-backend's participant files under /{studyKey}/files: upload, list, download, delete. The
 * bytes go to the shared file store, the one export files use (deps.fileStore, or the store
 * EXPORT_FILE_STORE names).
 */
export function createParticipantFilesRouter(deps: AppDeps, limiter: RateLimiter) {
  // the participant-data router it is mounted in checks the participant token
  const router = createRouter();
  const fileStore =
    deps.fileStore ??
    createFileStore(deps.database.db, { backend: deps.config.EXPORT_FILE_STORE, directory: deps.config.RESULT_DIR });
  registerUploadParticipantFile(router, deps, limiter, fileStore);
  registerListParticipantFiles(router, deps);
  registerGetParticipantFile(router, deps, fileStore);
  registerDeleteParticipantFile(router, deps, fileStore);
  return router;
}
