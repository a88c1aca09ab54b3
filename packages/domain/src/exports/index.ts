export { EXPORT_BATCH_SIZE, EXPORT_CHUNK_SIZE } from "./export-tuning";
export {
  countResponses,
  createResponseExportTask,
  responseExportOrder,
  type ResponseExportRequest,
} from "./response-export";
export { countParticipants, createParticipantExportTask, type ParticipantExportRequest } from "./participant-export";
export { countReports, createReportExportTask, type ReportExportRequest } from "./report-export";
export { exportMismatches, openStoredFile, openTaskFile, type OpenedFile } from "./task-file";
export {
  checkResponseExportRequest,
  recordResponseExportTask,
  type CheckedResponseExportRequest,
} from "./response-export";
export {
  DAILY_EXPORT_CREATOR,
  dailyExportDays,
  getDailyExportConfig,
  listDailyExports,
  openDailyExport,
  previousDay,
  setDailyExportConfig,
  startDailyExports,
  type DailyExportConfig,
  type DailyExportConfigInput,
  type DailyExportListing,
  type StartedDailyExport,
} from "./daily-exports";
export { removeExpiredExportFiles, type ExportRetention } from "./export-retention";
