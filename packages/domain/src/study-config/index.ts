// Study configuration: properties and status, code lists, study variables, rules versions, the audit log.
// Every change takes the acting management subject and records it in the audit log, in its transaction.
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decodePageCursor, encodePageCursor, type Page } from "./page-cursor";
export { assertStudyVisible, getStudyOverview, listVisibleStudies, type StudyOverview } from "./study-overview";
export {
  LANGUAGE_CODE,
  STUDY_PROPERTY_LIMITS,
  STUDY_STATUSES,
  checkStudyChange,
  isCalendarDate,
  updateStudy,
  type StudyChange,
} from "./study-properties";
export {
  MAX_CODES_PER_ADD,
  MAX_CODE_LENGTH,
  addStudyCodes,
  addStudyCodesReportingErrors,
  codeProblem,
  countStudyCodes,
  listStudyCodeLists,
  listStudyCodeEntries,
  listStudyCodeListKeys,
  listStudyCodes,
  removeStudyCode,
  removeStudyCodeList,
  studyCodeExists,
  type AddedCodes,
  type CodeListSummary,
  type StoredCode,
  type StoredCodeEntry,
} from "./code-lists";
export {
  MAX_STRING_VARIABLE_LENGTH,
  STUDY_VARIABLE_DESCRIPTION_LIMITS,
  STUDY_VARIABLE_TYPES,
  caseStudyVariableValue,
  createStudyVariable,
  deleteStudyVariable,
  listStudyVariables,
  parseStudyVariableText,
  readStudyVariable,
  setStudyVariable,
  studyVariableValue,
  updateStudyVariableDescription,
  updateStudyVariableValue,
  type StoredStudyVariable,
  type StudyVariableDefinition,
  type StudyVariableDescription,
  type StudyVariableInput,
  type StudyVariableValue,
} from "./study-variables";
export {
  MAX_COUNTER_SCOPE_LENGTH,
  counterScope,
  incrementStudyCounter,
  listStudyCounters,
  removeStudyCounter,
  saveStudyCounter,
  type StudyCounter,
} from "./study-counters";
export {
  deleteRulesVersion,
  getRulesVersion,
  listRulesVersions,
  type DeletedRulesVersion,
  type RulesVersion,
  type RulesVersionSummary,
} from "./rules-versions";
export { listAuditLog, type AuditLogEntry } from "./audit-log";
export * from "./case-props";
