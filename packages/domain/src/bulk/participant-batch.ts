import { sql } from "drizzle-orm";
import type { ParticipantState } from "@studyflow/engine";
import type { Executor } from "@studyflow/db";
import { EXCLUDED_FROM_BULK } from "../tasks/task-service";

/** The columns a bulk run reads and may write, as postgres.js returns them (jsonb parsed). */
export type BatchRow = {
  id: string;
  participant_id: string;
  version: number;
  current_study_session: string;
  entered_at: string | number;
  modified_at: string | number;
  study_status: string;
  flags: Record<string, string>;
  linking_codes: Record<string, string>;
  assigned_surveys: ParticipantState["assignedSurveys"];
  last_submissions: Record<string, number>;
  messages: ParticipantState["messages"];
};

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
}

/** The next page of eligible participants in key order (keyset pagination, never OFFSET). */
export async function readBatch(tx: Executor, range: BatchRange): Promise<BatchRow[]> {
  const upper = range.upTo === null ? sql`` : sql`and participant_id <= ${range.upTo}`;
  const lock = range.lock ? sql`for update` : sql``;
  const rows = await tx.execute<BatchRow>(sql`
    select id, participant_id, version, current_study_session, entered_at, modified_at, study_status,
           flags, linking_codes, assigned_surveys, last_submissions, messages
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
  state: ParticipantState;
}

/**
 * Writes every changed participant in one statement, each row guarded by the version it was read
 * with. Returns how many rows were written; fewer than given means another writer got there first.
 */
export async function writeChangedParticipants(
  tx: Executor,
  changed: readonly ChangedParticipant[],
  nowSeconds: number,
): Promise<number> {
  if (changed.length === 0) return 0;
  const records = changed.map(({ id, version, state }) => ({
    id,
    version,
    current_study_session: state.currentStudySession,
    study_status: state.studyStatus,
    entered_at: state.enteredAt,
    flags: state.flags,
    linking_codes: state.linkingCodes,
    assigned_surveys: state.assignedSurveys,
    last_submissions: state.lastSubmissions,
    messages: state.messages,
  }));
  // One JSON parameter instead of ten per row: the statement stays small and is parsed once.
  // `::text::jsonb` so postgres.js passes the string as text, not as a JSON string value.
  const written = await tx.execute<{ id: string }>(sql`
    update participants as p set
      current_study_session = v.current_study_session,
      study_status = v.study_status,
      entered_at = v.entered_at,
      flags = v.flags,
      linking_codes = v.linking_codes,
      assigned_surveys = v.assigned_surveys,
      last_submissions = v.last_submissions,
      messages = v.messages,
      modified_at = ${nowSeconds},
      version = p.version + 1
    from jsonb_to_recordset(${JSON.stringify(records)}::text::jsonb) as v(
      id uuid, version int, current_study_session text, study_status text, entered_at bigint,
      flags jsonb, linking_codes jsonb, assigned_surveys jsonb, last_submissions jsonb, messages jsonb)
    where p.id = v.id and p.version = v.version
    returning p.id`);
  return written.length;
}
