export { ExplorerPageCache, type ExplorerPageCacheOptions } from "./page-cache";
export type { ExplorerPage, ExplorerQuery } from "./explorer-page";
export { listExplorerParticipants, getExplorerParticipant } from "./explorer-participants";
export {
  listExplorerResponses,
  listParticipantResponses,
  getExplorerResponse,
  deleteExplorerResponses,
  deleteExplorerResponse,
  surveyVersionsForFormatting,
  type ExplorerResponse,
  type ExplorerSurveyVersion,
  type ResponseRow,
  type DeleteResponsesInput,
} from "./explorer-responses";
export {
  listExplorerReports,
  getExplorerReport,
  listReportKeys,
  type ReportRow,
  type ReportConditions,
} from "./explorer-reports";
