// Public data shapes of the rules engine. Everything here is plain JSON-compatible data, so the
// API, the worker and the database layer can pass it around without conversion.

/** One argument of an expression. A missing dtype reads as "str", a missing num as 0, a missing str as "". */
export interface ExpressionArg {
  dtype?: string;
  num?: number;
  str?: string;
  exp?: Expression | null;
}

export interface Expression {
  name: string;
  returnType?: string;
  data?: ExpressionArg[];
  /** Editor-only information (e.g. slot types); the engine ignores it. */
  metadata?: unknown;
}

export interface AssignedSurvey {
  surveyKey: string;
  validFrom: number;
  validUntil: number;
  category: string;
  studyKey?: string;
  profileID?: string;
}

export interface ParticipantMessage {
  id: string;
  type: string;
  scheduledFor: number;
}

/** All timestamps are Unix seconds. */
export interface ParticipantState {
  participantId: string;
  currentStudySession: string;
  enteredAt: number;
  modifiedAt: number;
  studyStatus: string;
  flags: Record<string, string>;
  linkingCodes: Record<string, string>;
  assignedSurveys: AssignedSurvey[];
  lastSubmissions: Record<string, number>;
  messages: ParticipantMessage[];
}

/** A top-level field of the participant state; the registry declares which ones each function uses. */
export type ParticipantField = keyof ParticipantState;

export interface ResponseItem {
  key: string;
  value?: string;
  dtype?: string;
  items?: ResponseItem[];
}

export interface SurveyItemResponse {
  key: string;
  meta?: unknown;
  response?: ResponseItem;
  confidentialMode?: string;
  mapToKey?: string;
}

export interface SurveyResponse {
  id?: string;
  key: string;
  participantId?: string;
  versionId?: string;
  openedAt?: number;
  submittedAt?: number;
  arrivedAt?: number;
  responses?: SurveyItemResponse[];
  context?: Record<string, string>;
}

export type EventType = "ENTER" | "SUBMIT" | "LEAVE" | "MERGE" | "CUSTOM" | "TIMER";

export interface StudyEvent {
  type: EventType;
  studyKey: string;
  eventKey?: string;
  payload?: Record<string, unknown>;
  response?: SurveyResponse;
  mergeWithParticipant?: ParticipantState;
  participantIDForConfidentialResponses?: string;
}

export interface ReportData {
  key: string;
  value: string;
  dtype?: string;
}

export interface Report {
  key: string;
  participantId: string;
  timestamp: number;
  data: ReportData[];
}

/**
 * Side effects that only write are returned, not performed, so the caller persists them in its own
 * transaction (or drops them on abort / dry run).
 */
export type SideEffect =
  | { kind: "notify-researcher"; messageType: string; participantId: string; payload: Record<string, string> }
  | ({ kind: "send-message" } & ImmediateMessage)
  | { kind: "remove-confidential-responses"; confidentialId: string; key?: string };

/** A SEND_MESSAGE_NOW message: its type names the study's template, its payload what a template may use. */
export interface ImmediateMessage {
  messageType: string;
  confidentialId: string;
  languageOverride?: string;
  payload: Record<string, string>;
}

/** `date` values are Unix seconds. */
export interface StudyVariable {
  key: string;
  type: "string" | "int" | "float" | "boolean" | "date";
  value: string | number | boolean;
}

export interface OldResponsesQuery {
  participantId: string;
  surveyKey?: string;
  since?: number;
  until?: number;
  limit: number;
}

/**
 * Ports for what must read or atomically change the database now. Every method may reject; a
 * rejection becomes a rule error, never a crash.
 */
export interface EngineServices {
  /** 0 if the counter does not exist. */
  getCounterValue(scope: string): Promise<number>;
  /** Atomic upsert-increment; returns the new value (the first call returns 1). */
  incrementCounter(scope: string): Promise<number>;
  resetCounter(scope: string): Promise<void>;
  isCodePresent(listKey: string, code: string): Promise<boolean>;
  /** Atomically removes and returns one code; null if the list is empty. */
  drawCode(listKey: string): Promise<string | null>;
  removeCode(listKey: string, code: string): Promise<void>;
  getStudyVariable(key: string): Promise<StudyVariable | null>;
  /** Rejects if the variable is missing or its declared type differs. */
  updateStudyVariable(key: string, type: StudyVariable["type"], value: string | number | boolean): Promise<void>;
  /** Most recent first (arrivedAt descending). */
  findOldResponses(query: OldResponsesQuery): Promise<SurveyResponse[]>;
  /** The parsed JSON reply; rejects on a transport error or a non-2xx status. */
  callExternalService(serviceName: string, route: string, body: unknown): Promise<unknown>;
  /**
   * Asked by SEND_MESSAGE_NOW before its message becomes an effect: null when the study can send
   * it (it has a template for the message type), else why not. The action then fails with that
   * reason and nothing is sent. An implementation may record the refused message (the database
   * one lists it with the study's failed e-mails); that record stays even though the rule fails.
   */
  refuseMessage(message: ImmediateMessage): Promise<string | null>;
}

export interface EngineEnv {
  services: EngineServices;
  /** Milliseconds since the epoch. */
  clock: () => number;
  /** Uniform in [0, 1). */
  random: () => number;
  /** Ids for participant messages. */
  newId: () => string;
  /**
   * The study's IANA time zone (e.g. "Europe/Amsterdam") for the calendar functions
   * (getTsForNextStartOfMonth, getTsForNextISOWeek, getISOWeekForTs, dateToStr); absent means
   * "UTC". A name Intl does not accept makes those functions fail with a rule error.
   */
  timeZone?: string;
}

/** `path` looks like "rules[2].data[1].exp.name". */
export interface ValidationIssue {
  path: string;
  message: string;
}

export type ValidationResult = { ok: true; rules: Expression[] } | { ok: false; errors: ValidationIssue[] };

export interface CompiledRuleSet {
  readonly ruleCount: number;
  readonly rules: readonly Expression[];
}

export interface RuleError {
  ruleIndex: number;
  /** JSON path of the failing node in the rule set, e.g. "rules[2].data[1].exp". */
  path: string;
  message: string;
}

export interface ApplyResult {
  /** The new state; the input is never mutated. */
  state: ParticipantState;
  /** Most recent first, as INIT_REPORT prepends. */
  reports: Report[];
  effects: SideEffect[];
  /** Rule i changed the state (semantic comparison, see statesEqual). */
  changedPerRule: boolean[];
  /** Set when a rule failed; with the default policy processing stopped there. */
  error?: RuleError;
  /** Every failed rule, in order; only present when a rule failed ("continue" can collect several). */
  errors?: RuleError[];
  /**
   * Actions inside an IFTHEN that failed while their rule went on: each one's own changes were
   * dropped, the actions after it ran. Only present when there were some. A rule that failed as a
   * whole is reported in `errors` only: nothing of it stands, its skipped actions included.
   */
  skippedActions?: RuleError[];
}

export interface ApplyOptions {
  /**
   * What a failing top-level rule does besides dropping its own changes: "stop" (default, the
   * reference's participant-event policy) ends processing there; "continue" runs the later rules
   * (the reference's TIMER policy).
   */
  onRuleError?: "stop" | "continue";
}
