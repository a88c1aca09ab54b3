import { sql, type SQL } from "drizzle-orm";
import type { ParticipantField, ParticipantState } from "@studyflow/engine";
import {
  ELIGIBLE_FOR_BULK_SQL,
  JSON_PARTICIPANT_FIELDS,
  PARTICIPANT_FIELD_COLUMNS,
  PARTICIPANT_FIELD_NAMES,
  SCALAR_PARTICIPANT_FIELDS,
  WRITABLE_PARTICIPANT_FIELDS,
  executePrepared,
  type Executor,
  type JsonParticipantFieldName,
  type ParticipantColumnOf,
  type ParticipantFieldName,
  type ScalarParticipantFieldName,
  type participants,
} from "@studyflow/db";
import { syncMessageSchedule } from "../participants/message-schedule";

// @studyflow/db cannot import the engine, so its field table and the engine's ParticipantState are
// tied together here: a field added to one and not the other fails to compile.
type SameUnion<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _fieldTableIsTheEngineState: SameUnion<ParticipantFieldName, ParticipantField> = true;

type ParticipantRow = typeof participants.$inferSelect;
/** A column as postgres.js returns it to a raw statement: bigint comes as text. */
type RawValue<F extends ParticipantFieldName> = (typeof PARTICIPANT_FIELD_COLUMNS)[F]["sqlType"] extends "bigint"
  ? string | number
  : ParticipantRow[F];

/** The columns a bulk run reads and may write, as postgres.js returns them (jsonb parsed). */
export type BatchRow = { id: string; version: number } & {
  [F in ScalarParticipantFieldName as ParticipantColumnOf<F>]: RawValue<F>;
} & {
  // only the JSON columns the rule set uses are selected
  [F in JsonParticipantFieldName as ParticipantColumnOf<F>]?: RawValue<F>;
};

/** A JSON column that was not loaded reads as empty: the rules never look at it and it is never written. */
export function batchRowToState(row: BatchRow): ParticipantState {
  const columns = row as unknown as Record<string, unknown>;
  const state: Record<string, unknown> = {};
  for (const field of PARTICIPANT_FIELD_NAMES) {
    const { column, sqlType, json } = PARTICIPANT_FIELD_COLUMNS[field];
    const value = columns[column];
    if (sqlType === "bigint") state[field] = Number(value);
    else if (json === false) state[field] = value;
    else state[field] = value ?? (json === "array" ? [] : {});
  }
  return state as unknown as ParticipantState;
}

/**
 * The columns readBatch selects: every scalar one (they are cheap), and the JSON ones among
 * `fields` (all of them without `fields`).
 */
export function batchColumns(fields?: ReadonlySet<ParticipantFieldName>): string[] {
  return [
    "id",
    "version",
    ...SCALAR_PARTICIPANT_FIELDS.map((field) => PARTICIPANT_FIELD_COLUMNS[field].column),
    ...JSON_PARTICIPANT_FIELDS.filter((field) => fields?.has(field) ?? true).map(
      (field) => PARTICIPANT_FIELD_COLUMNS[field].column,
    ),
  ];
}

export interface BatchRange {
  studyKey: string;
  /** Exclusive lower bound. */
  after: string;
  /** Inclusive upper bound; null = to the end of the study. */
  upTo: string | null;
  limit: number;
  /** Lock the rows until the transaction ends (the retry after a version conflict). */
  lock: boolean;
  /** The fields the rules use (default all); parsing JSON is most of the cost of a read. */
  fields?: ReadonlySet<ParticipantFieldName>;
  /** Only rows that also meet this condition (the rules' prefilter); the others are passed over. */
  where?: SQL;
}

/**
 * The participants a bulk run evaluates: every one but deleted accounts and anonymous
 * pre-registrations. Literal SQL, the predicate of participants_bulk_eligible_idx: with the
 * statuses as parameters the planner could not tell that the index covers the query.
 */
export const eligibleForBulk = sql.raw(ELIGIBLE_FOR_BULK_SQL);

/** The next page of eligible participants in key order (keyset pagination, never OFFSET). */
export async function readBatch(tx: Executor, range: BatchRange): Promise<BatchRow[]> {
  const upper = range.upTo === null ? sql`` : sql`and participant_id <= ${range.upTo}`;
  const lock = range.lock ? sql`for update` : sql``;
  const where = range.where ? sql`and (${range.where})` : sql``;
  // the column names come from the field table, never from input
  const columns = sql.raw(batchColumns(range.fields).join(", "));
  const rows = await executePrepared<BatchRow>(
    tx,
    sql`
    select ${columns}
    from participants
    where study_key = ${range.studyKey} and participant_id > ${range.after} ${upper} and ${eligibleForBulk} ${where}
    order by participant_id
    limit ${range.limit}
    ${lock}`,
  );
  return [...rows];
}

/**
 * How many eligible participants have keys in (after, upTo] (upTo null: to the end of the study):
 * what a batch that read only its prefilter's rows has passed over, for its exact count.
 */
export async function countEligibleInRange(
  tx: Executor,
  range: Pick<BatchRange, "studyKey" | "after" | "upTo">,
): Promise<number> {
  const upper = range.upTo === null ? sql`` : sql`and participant_id <= ${range.upTo}`;
  const [row] = await executePrepared<{ count: number }>(
    tx,
    sql`
    select count(*)::int as count from participants
    where study_key = ${range.studyKey} and participant_id > ${range.after} ${upper} and ${eligibleForBulk}`,
  );
  return row?.count ?? 0;
}

export interface ChangedParticipant {
  id: string;
  version: number;
  before: ParticipantState;
  state: ParticipantState;
}

/** The engine copies on write, so an untouched field is the very same value it was given. */
function fieldChanged(before: unknown, after: unknown): boolean {
  if (before === after) return false;
  if (typeof before !== "object" || typeof after !== "object") return true;
  return JSON.stringify(before) !== JSON.stringify(after);
}

/** The writable fields some participant of the batch changed: the columns writeChangedParticipants sets. */
export function changedFields(changed: readonly Omit<ChangedParticipant, "id" | "version">[]): ParticipantFieldName[] {
  return WRITABLE_PARTICIPANT_FIELDS.filter((field) =>
    changed.some(({ before, state }) => fieldChanged(before[field], state[field])),
  );
}

/**
 * Writes every changed participant in one statement, each row guarded by the version it was read
 * with, and only the columns some participant of the batch changed: a rule that sets a flag
 * sends and rewrites the flags, not the surveys and messages. Returns how many rows were
 * written; fewer than given means another writer got there first.
 *
 * When messages changed, one more statement brings their due-time index in line for the written
 * participants (see syncMessageSchedule); a batch whose rules leave messages alone pays nothing.
 */
export async function writeChangedParticipants(
  tx: Executor,
  changed: readonly ChangedParticipant[],
  nowSeconds: number,
): Promise<number> {
  if (changed.length === 0) return 0;
  const fields = changedFields(changed).map((field) => ({ field, ...PARTICIPANT_FIELD_COLUMNS[field] }));
  const records = changed.map(({ id, version, state }) => {
    const record: Record<string, unknown> = { id, version };
    for (const { field, column } of fields) record[column] = state[field];
    return record;
  });
  const assignments = fields.map(({ column }) => sql.raw(`${column} = v.${column}`));
  const columns = fields.map(({ column, sqlType }) => sql.raw(`, ${column} ${sqlType}`));
  // One JSON parameter instead of one per value: the statement stays small and is parsed once.
  // `::text::jsonb` so postgres.js passes the string as text, not as a JSON string value.
  const written = await executePrepared<{ id: string; study_key: string }>(
    tx,
    sql`
    update participants as p set
      ${sql.join([...assignments, sql`modified_at = ${nowSeconds}`, sql`version = p.version + 1`], sql`, `)}
    from jsonb_to_recordset(${JSON.stringify(records)}::text::jsonb) as v(id uuid, version int${sql.join(columns, sql``)})
    where p.id = v.id and p.version = v.version
    returning p.id, p.study_key`,
  );
  if (fields.some(({ field }) => field === "messages")) {
    const studyOf = new Map(written.map((row) => [row.id, row.study_key]));
    await syncMessageSchedule(
      tx,
      changed.flatMap(({ id, before, state }) => {
        const studyKey = studyOf.get(id);
        // a row another writer changed first was not written: its index stays as that writer left it
        return studyKey === undefined
          ? []
          : [{ studyKey, participantId: state.participantId, before: before.messages, after: state.messages }];
      }),
    );
  }
  return written.length;
}
