// @studyflow/engine: the study rules engine (CASE expression language). Pure functions over plain
// data; everything that touches the database goes through the EngineServices ports.
export type {
  ApplyOptions,
  ApplyResult,
  AssignedSurvey,
  CompiledRuleSet,
  EngineEnv,
  EngineServices,
  EventType,
  Expression,
  ExpressionArg,
  ImmediateMessage,
  OldResponsesQuery,
  ParticipantField,
  ParticipantMessage,
  ParticipantState,
  Report,
  ReportData,
  ResponseItem,
  RuleError,
  SideEffect,
  StudyEvent,
  StudyVariable,
  SurveyItemResponse,
  SurveyResponse,
  ValidationIssue,
  ValidationResult,
} from "./types";
export { applyAction, applyRules, compileRules, evaluateExpression } from "./apply-rules";
export {
  MAX_DEPTH,
  MAX_NODES,
  RuleValidationError,
  validateAction,
  validateExpression,
  validateRules,
} from "./validator";
export { PARTICIPANT_FIELDS, normalizeParticipantState, statesEqual } from "./participant-state";
export { fieldsUsedBy } from "./field-usage";
export { bulkPrefilter } from "./sql-prefilter";
export {
  bulkBatchPlan,
  bulkWritePlan,
  type BulkWritePlan,
  type RuleWrites,
  type StateWrite,
  type WriteStep,
} from "./bulk-writes";
export type { ColumnField, CompareOp, ListField, MapField, RowPredicate, ValueTest } from "./row-predicate";
export { rulesHandleEvent } from "./event-handling";
export { isTimeZoneName } from "./zoned-calendar";
export { inputTextProblem, jsonInputProblem, type JsonInputLimits } from "./text-values";
export type { FieldUsageOptions } from "./field-usage";
export { createDeterministicEnv, createInMemoryServices } from "./in-memory-services";
export type { DeterministicEnvOptions, InMemoryServices, InMemorySeed } from "./in-memory-services";
export { actionNames, expressionNames } from "./registry";
export { describeRegistry } from "./registry-docs";
export { readOnlyServices } from "./read-only-services";
export {
  dropPrefillsMissingFromSurvey,
  formatGoFloat,
  prefillRuleNames,
  resolvePrefillRules,
  surveyHasItem,
  type PrefillOutcome,
  type PrefillProblem,
  type SurveyPrefill,
} from "./survey-prefill";
export { resolveSurveyContext, type SurveyContext, type SurveyContextOutcome } from "./survey-context";
