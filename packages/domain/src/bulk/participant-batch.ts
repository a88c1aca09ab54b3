import { sql } from "drizzle-orm";
import type { ParticipantState } from "@studyflow/engine";
import type { Executor } from "@studyflow/db";
import { EXCLUDED_FROM_BULK } from "../tasks/task-service";
import { JSON_FIELDS, type JsonField } from "./rule-field-usage";

/** The columns a bulk run reads and may write, as postgres.js returns them (jsonb parsed). */
export type BatchRow = {
  id: string;
  participant_id: string;
  version: number;
  current_study_session: string;
  entered_at: string | number;
  modified_at: string | number;
  study_status: string;
  // JSON columns: only those the rule set uses are selected.
  flags?: Record<string, string>;
  linking_codes?: Record<string, string>;
  assigned_surveys?: ParticipantState["assignedSurveys"];
  last_submissions?: Record<string, number>;
  messages?: ParticipantState["messages"];
};

const COLUMN_OF: Record<JsonField, string> = {
  flags: "flags",
  linkingCodes: "linking_codes",
  assignedSurveys: "assigned_surveys",
  lastSubmissions: "last_submissions",
  messages: "messages",
};

/** A JSON column that was not loaded reads as empty: the rules never look at it and it is never written. */
export function batchRowToState(row: BatchRow): ParticipantState {
  return {
    participantId: row.participant_id,
    currentStudySession: row.current_study_session,
    enteredAt: Number(row.entered_at),
    modifiedAt: Number(row.modified_at),
    studyStatus: row.study_status,
    flags: row.flags ?? {},
    linkingCodes: row.linking_codes ?? {},
    assignedSurveys: row.assigned_surveys ?? [],
    lastSubmissions: row.last_submissions ?? {},
    messages: row.messages ?? [],
  };
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
  /** JSON columns to load (default all); parsing JSON is most of the cost of a read. */
  fields?: ReadonlySet<JsonField>;
}

/** The next page of eligible participants in key order (keyset pagination, never OFFSET). */
export async function readBatch(tx: Executor, range: BatchRange): Promise<BatchRow[]> {
  const upper = range.upTo === null ? sql`` : sql`and participant_id <= ${range.upTo}`;
  const lock = range.lock ? sql`for update` : sql``;
  const jsonColumns = JSON_FIELDS.filter((field) => range.fields?.has(field) ?? true).map((field) =>
    sql.raw(`, ${COLUMN_OF[field]}`),
  );
  const rows = await tx.execute<BatchRow>(sql`
    select id, participant_id, version, current_study_session, entered_at, modified_at, study_status
           ${sql.join(jsonColumns, sql``)}
    from participants
    where study_key = ${range.studyKey} and participant_id > ${range.after} ${upper}
      and study_status not in (${sql.join(
        EXCLUDED_FROM_BULK.map((status) => sql`${status}`),
        sql`, `,
      )})
    order by participant_id
    limit ${range.limit}
    ${lock}`);
  return [...rows];
}

export interface ChangedParticipant {
  id: string;
  version: number;
  before: ParticipantState;
  state: ParticipantState;
}

/** The state fields a rule can change, with their column and SQL type. */
const WRITABLE_FIELDS = [
  { field: "currentStudySession", column: "current_study_session", type: "text" },
  { field: "studyStatus", column: "study_status", type: "text" },
  { field: "enteredAt", column: "entered_at", type: "bigint" },
  { field: "flags", column: "flags", type: "jsonb" },
  { field: "linkingCodes", column: "linking_codes", type: "jsonb" },
  { field: "assignedSurveys", column: "assigned_surveys", type: "jsonb" },
  { field: "lastSubmissions", column: "last_submissions", type: "jsonb" },
  { field: "messages", column: "messages", type: "jsonb" },
] as const satisfies readonly { field: keyof ParticipantState; column: string; type: string }[];

/** The engine copies on write, so an untouched field is the very same value it was given. */
function fieldChanged(before: unknown, after: unknown): boolean {
  if (before === after) return false;
  if (typeof before !== "object" || typeof after !== "object") return true;
  return JSON.stringify(before) !== JSON.stringify(after);
}

/**
 * Writes every changed participant in one statement, each row guarded by the version it was read
 * with, and only the columns some participant of the batch changed: a rule that sets a flag
 * sends and rewrites the flags, not the surveys and messages. Returns how many rows were
 * written; fewer than given means another writer got there first.
 */
export async function writeChangedParticipants(
  tx: Executor,
  changed: readonly ChangedParticipant[],
  nowSeconds: number,
): Promise<number> {
  if (changed.length === 0) return 0;
  const fields = WRITABLE_FIELDS.filter(({ field }) =>
    changed.some(({ before, state }) => fieldChanged(before[field], state[field])),
  );
  const records = changed.map(({ id, version, state }) => {
    const record: Record<string, unknown> = { id, version };
    for (const { field, column } of fields) record[column] = state[field];
    return record;
  });
  const assignments = fields.map(({ column }) => sql.raw(`${column} = v.${column}`));
  const columns = fields.map(({ column, type }) => sql.raw(`, ${column} ${type}`));
  // One JSON parameter instead of one per value: the statement stays small and is parsed once.
  // `::text::jsonb` so postgres.js passes the string as text, not as a JSON string value.
  const written = await tx.execute<{ id: string }>(sql`
    update participants as p set
      ${sql.join([...assignments, sql`modified_at = ${nowSeconds}`, sql`version = p.version + 1`], sql`, `)}
    from jsonb_to_recordset(${JSON.stringify(records)}::text::jsonb) as v(id uuid, version int${sql.join(columns, sql``)})
    where p.id = v.id and p.version = v.version
    returning p.id`);
  return written.length;
}
