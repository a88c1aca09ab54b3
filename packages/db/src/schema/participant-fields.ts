// The one description of how a participant's state is stored: for each state field its column, SQL
// type and whether a rule can change it. The drizzle table, the bulk run's raw statements and the
// conversion to the engine's state are derived from it. This package cannot import the engine, so
// the field names are a literal union here; @studyflow/domain checks at compile time that they are
// exactly the keys of the engine's ParticipantState.

export type ParticipantSqlType = "text" | "bigint" | "jsonb";

export interface ParticipantFieldColumn {
  readonly column: string;
  readonly sqlType: ParticipantSqlType;
  /** For JSON columns: what a column that was not loaded reads as ("object" = {}, "array" = []). */
  readonly json: false | "object" | "array";
  /** A rule can change it (modified_at is set by whoever writes; participant_id never changes). */
  readonly writable: boolean;
}

const scalar = <C extends string, T extends "text" | "bigint", W extends boolean>(column: C, sqlType: T, writable: W) =>
  ({ column, sqlType, json: false, writable }) as const;

const json = <C extends string, J extends "object" | "array">(column: C, container: J) =>
  ({ column, sqlType: "jsonb", json: container, writable: true }) as const;

/** In the order of the engine's ParticipantState, which is the order the API shows the fields in. */
export const PARTICIPANT_FIELD_COLUMNS = {
  participantId: scalar("participant_id", "text", false),
  currentStudySession: scalar("current_study_session", "text", true),
  enteredAt: scalar("entered_at", "bigint", true),
  modifiedAt: scalar("modified_at", "bigint", false),
  studyStatus: scalar("study_status", "text", true),
  flags: json("flags", "object"),
  linkingCodes: json("linking_codes", "object"),
  assignedSurveys: json("assigned_surveys", "array"),
  lastSubmissions: json("last_submissions", "object"),
  messages: json("messages", "array"),
} as const satisfies Record<string, ParticipantFieldColumn>;

type Columns = typeof PARTICIPANT_FIELD_COLUMNS;
export type ParticipantFieldName = keyof Columns;
export type JsonParticipantFieldName = {
  [F in ParticipantFieldName]: Columns[F]["json"] extends false ? never : F;
}[ParticipantFieldName];
export type ScalarParticipantFieldName = Exclude<ParticipantFieldName, JsonParticipantFieldName>;
/** The column of a field, as a type: `ParticipantColumnOf<"linkingCodes">` is "linking_codes". */
export type ParticipantColumnOf<F extends ParticipantFieldName> = Columns[F]["column"];

export const PARTICIPANT_FIELD_NAMES = Object.freeze(Object.keys(PARTICIPANT_FIELD_COLUMNS) as ParticipantFieldName[]);

export const JSON_PARTICIPANT_FIELDS = Object.freeze(
  PARTICIPANT_FIELD_NAMES.filter(
    (field): field is JsonParticipantFieldName => PARTICIPANT_FIELD_COLUMNS[field].json !== false,
  ),
);

export const SCALAR_PARTICIPANT_FIELDS = Object.freeze(
  PARTICIPANT_FIELD_NAMES.filter(
    (field): field is ScalarParticipantFieldName => PARTICIPANT_FIELD_COLUMNS[field].json === false,
  ),
);

export const WRITABLE_PARTICIPANT_FIELDS = Object.freeze(
  PARTICIPANT_FIELD_NAMES.filter((field) => PARTICIPANT_FIELD_COLUMNS[field].writable),
);

/** The state fields of a row in table order, for rows whose keys are the field names (drizzle's). */
export function pickParticipantFields<R extends Record<ParticipantFieldName, unknown>>(
  row: R,
): Pick<R, ParticipantFieldName> {
  const picked: Partial<Pick<R, ParticipantFieldName>> = {};
  for (const field of PARTICIPANT_FIELD_NAMES) picked[field] = row[field];
  return picked as Pick<R, ParticipantFieldName>;
}
