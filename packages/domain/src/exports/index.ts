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
