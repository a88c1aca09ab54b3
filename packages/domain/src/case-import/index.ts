// Taking over a CASE deployment: a case-backend mongodump read as a stream and imported into studyflow.
export * from "./case-values";
export * from "./dump-reader";
export {
  CASE_IMPORT_BATCH_SIZE,
  CASE_IMPORT_PARTS,
  caseDatabaseName,
  importCaseDump,
  type CaseImportListener,
  type CaseImportOptions,
  type CaseImportPart,
  type CaseImportProblem,
  type CaseImportSummary,
  type CollectionSummary,
} from "./run-import";
