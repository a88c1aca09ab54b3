export type {
  ExportFormatter,
  ExportResponse,
  BatchCounts,
  ByteSink,
  FormattedBatch,
  IncludeMeta,
  ResponseExportFormat,
  ResponseExportOptions,
  ResponseFormatter,
  SurveyVersionInput,
  TextSink,
} from "./types";
export { DEFAULT_QUESTION_OPTION_SEP } from "./types";
export { createResponseFormatter, responseExportColumns } from "./response-formatter";
export { surveyInfo, type SurveyInfoFile, type SurveyInfoOptions } from "./survey-info";
export { csvField, csvRecord, formulaGuarded } from "./go-csv";
export { compareGoStrings, goJsonString } from "./go-json";
export {
  createParticipantFormatter,
  participantJson,
  type ExportParticipant,
  type ParticipantExportOptions,
} from "./participant-formatter";
export { createReportFormatter, reportJson, type ExportReport, type ReportExportOptions } from "./report-formatter";
export {
  confidentialResponseEntries,
  createConfidentialResponseFormatter,
  type ConfidentialExportOptions,
  type ConfidentialResponseEntry,
  type ExportConfidentialResponse,
} from "./confidential-formatter";
