import { and, eq } from "drizzle-orm";
import type { ParticipantState } from "@studyflow/engine";
import type { Sql } from "postgres";
import {
  participants,
  pickParticipantFields,
  rawClientOf,
  type Executor,
  type StoredAssignedSurvey,
  type StoredParticipantMessage,
} from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import { getActiveStudy, type StudyRow } from "../studies/study-repository";
import { scheduleChanges, syncMessageSchedule } from "./message-schedule";

export type ParticipantRow = typeof participants.$inferSelect;

/** Typed against the field table: a drizzle row whose state columns do not fit ParticipantState fails to compile. */
export function toEngineState(row: ParticipantRow): ParticipantState {
  return pickParticipantFields(row);
}

/** Reads a participant and locks its row until the transaction ends. */
export async function lockParticipant(
  tx: Executor,
  studyKey: string,
  participantId: string,
): Promise<ParticipantRow | undefined> {
  const [row] = await tx
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)))
    .for("update")
    .limit(1);
  return row;
}

/** A participants row as postgres.js returns it to plain statements: bigint as text. */
export interface RawParticipant {
  id: string;
  study_key: string;
  participant_id: string;
  current_study_session: string;
  entered_at: string;
  modified_at: string;
  study_status: string;
  flags: Record<string, string>;
  linking_codes: Record<string, string>;
  assigned_surveys: StoredAssignedSurvey[];
  last_submissions: Record<string, number>;
  messages: StoredParticipantMessage[];
  hashed_account_id: string | null;
  is_main_profile: boolean | null;
  version: number;
}

/** The row as drizzle's select of the table reads it. */
export function participantFromRaw(raw: RawParticipant): ParticipantRow {
  return {
    id: raw.id,
    studyKey: raw.study_key,
    participantId: raw.participant_id,
    currentStudySession: raw.current_study_session,
    enteredAt: Number(raw.entered_at),
    modifiedAt: Number(raw.modified_at),
    studyStatus: raw.study_status,
    flags: raw.flags,
    linkingCodes: raw.linking_codes,
    assignedSurveys: raw.assigned_surveys,
    lastSubmissions: raw.last_submissions,
    messages: raw.messages,
    hashedAccountId: raw.hashed_account_id,
    isMainProfile: raw.is_main_profile,
    version: raw.version,
  };
}

/**
 * The lock every participant event starts with, in one round trip: the participant's row for
 * update and its study's row for share, so the study cannot be set inactive (updateStudy waits
 * for the share lock) until the event commits. Undefined when the participant or the study does
 * not exist; Conflict when the study is not active. The study's other settings come from the read
 * cache; its status is read here, under the lock.
 *
 * Written for postgres.js directly, like saveParticipantState: a prepared statement per
 * connection, one round trip per execution (see rawClientOf).
 */
export async function lockParticipantForEvent(
  tx: Executor,
  studyKey: string,
  participantId: string,
): Promise<ParticipantRow | undefined> {
  const [raw] = await rawClientOf(tx)<(RawParticipant & { study_state: string })[]>`
    select p.id, p.study_key, p.participant_id, p.current_study_session, p.entered_at, p.modified_at,
      p.study_status, p.flags, p.linking_codes, p.assigned_surveys, p.last_submissions, p.messages,
      p.hashed_account_id, p.is_main_profile, p.version, s.status as study_state
    from participants p join studies s on s.key = p.study_key
    where p.study_key = ${studyKey} and p.participant_id = ${participantId}
    for update of p for share of s`;
  if (!raw) return undefined;
  if (raw.study_state !== "active") throw new Conflict(`study "${studyKey}" is not active`);
  return participantFromRaw(raw);
}

/**
 * Locks the participant of an event together with its active study (one round trip). When it is
 * not found, the study's own errors come first (not found, not active), then `notFound`.
 */
export async function lockEventParticipant(
  tx: Executor,
  study: StudyRow,
  participantId: string,
  notFound: () => Error,
): Promise<ParticipantRow> {
  const row = await lockParticipantForEvent(tx, study.key, participantId);
  if (row) return row;
  await getActiveStudy(tx, study.key);
  throw notFound();
}

export async function lockParticipantOrThrow(tx: Executor, studyKey: string, participantId: string) {
  const row = await lockParticipant(tx, studyKey, participantId);
  if (!row) throw new NotFound(`participant "${participantId}" not found in study "${studyKey}"`);
  return row;
}

export interface NewParticipant {
  studyKey: string;
  participantId: string;
  studyStatus: string;
  enteredAt: number;
  hashedAccountId?: string | null;
  isMainProfile?: boolean | null;
}

/** Inserts unless the participant exists (a concurrent first entry); returns the locked row and whether it is new. */
export async function insertOrLockParticipant(
  tx: Executor,
  input: NewParticipant,
): Promise<{ row: ParticipantRow; created: boolean }> {
  const [inserted] = await tx
    .insert(participants)
    .values({
      studyKey: input.studyKey,
      participantId: input.participantId,
      studyStatus: input.studyStatus,
      enteredAt: input.enteredAt,
      modifiedAt: input.enteredAt,
      hashedAccountId: input.hashedAccountId ?? null,
      isMainProfile: input.isMainProfile ?? null,
    })
    .onConflictDoNothing({ target: [participants.studyKey, participants.participantId] })
    .returning();
  if (inserted) return { row: inserted, created: true };
  return { row: await lockParticipantOrThrow(tx, input.studyKey, input.participantId), created: false };
}

/**
 * A JSON column's new text, or null when the state holds the very container the row was read with:
 * the engine copies a map or list on its first write (state-writes.ts), and every other writer
 * builds new ones, so the same object means the same stored value. null leaves the column as it is
 * (see saveParticipantState), which spares serialising it here and PostgreSQL parsing and
 * rewriting it.
 */
function changedJson(before: unknown, after: unknown): string | null {
  return before === after ? null : JSON.stringify(after);
}

/**
 * Writes a new state guarded by the version that was read: a concurrent writer makes this a
 * Conflict instead of a lost update. Changed messages update their due-time index
 * (participant_message_schedule) in the same transaction.
 *
 * Only the JSON columns whose container is not the row's own are sent (changedJson): callers
 * never change a row's containers in place. The saved row is built from the row and the state,
 * not read back: the update sets every state column to what it returns, no trigger on the table
 * changes a row before it is written, and the version guard says nothing else wrote in between.
 */
export async function saveParticipantState(
  tx: Executor,
  row: ParticipantRow,
  state: ParticipantState,
  nowSeconds: number,
): Promise<ParticipantRow> {
  const client = rawClientOf(tx);
  const result = await client`${stateUpdate(client, row, state, nowSeconds)}`;
  if (result.count === 0) throw new Conflict(CHANGED_BY_ANOTHER);
  await syncMessageSchedule(tx, [messagesWrite(row, state)]);
  return savedRow(row, state, nowSeconds);
}

/**
 * The guarded update of a state write. JSON goes as text cast to jsonb, null (unchanged) as the
 * column itself: one prepared statement whatever changed, as postgres.js types a null and a string
 * parameter alike.
 */
function stateUpdate(client: Sql, row: ParticipantRow, state: ParticipantState, nowSeconds: number) {
  return client`
    update participants set
      current_study_session = ${state.currentStudySession}, study_status = ${state.studyStatus},
      entered_at = ${state.enteredAt}, modified_at = ${nowSeconds},
      flags = coalesce(${changedJson(row.flags, state.flags)}::text::jsonb, flags),
      linking_codes = coalesce(${changedJson(row.linkingCodes, state.linkingCodes)}::text::jsonb, linking_codes),
      assigned_surveys = coalesce(${changedJson(row.assignedSurveys, state.assignedSurveys)}::text::jsonb, assigned_surveys),
      last_submissions = coalesce(${changedJson(row.lastSubmissions, state.lastSubmissions)}::text::jsonb, last_submissions),
      messages = coalesce(${changedJson(row.messages, state.messages)}::text::jsonb, messages),
      version = version + 1
    where id = ${row.id} and version = ${row.version}`;
}

const CHANGED_BY_ANOTHER = "participant was changed by another request; retry";

const messagesWrite = (row: ParticipantRow, state: ParticipantState) => ({
  studyKey: row.studyKey,
  participantId: row.participantId,
  before: row.messages,
  after: state.messages,
});

/** The row as a state write leaves it (see saveParticipantState). */
function savedRow(row: ParticipantRow, state: ParticipantState, nowSeconds: number): ParticipantRow {
  return {
    ...row,
    currentStudySession: state.currentStudySession,
    enteredAt: state.enteredAt,
    modifiedAt: nowSeconds,
    studyStatus: state.studyStatus,
    flags: state.flags,
    linkingCodes: state.linkingCodes,
    assignedSurveys: state.assignedSurveys,
    lastSubmissions: state.lastSubmissions,
    messages: state.messages,
    version: row.version + 1,
  };
}

/** Whether writing `state` changes the participant's message schedule (saveParticipantState's second statement). */
export function stateWritesSchedule(row: ParticipantRow, state: ParticipantState): boolean {
  const changes = scheduleChanges(messagesWrite(row, state));
  return changes.removed.length > 0 || changes.upserted.length > 0;
}

/**
 * saveParticipantState's update handed to the connection at once, for the last statements of an
 * event, which go to the server with its COMMIT (EventContext.sendWithCommit): `sent` settles with
 * the server's answer, after the COMMIT. The version guard therefore fails on the server: when no
 * row has the version that was read, `count(*) / count(*)` divides zero by zero, the error aborts
 * the transaction, and the COMMIT behind it rolls everything back; `sent` then rejects with the
 * Conflict saveParticipantState throws. Only for a state that leaves the message schedule as it is
 * (stateWritesSchedule), and under the row's lock, as every event holds it.
 */
export function sendParticipantState(
  tx: Executor,
  row: ParticipantRow,
  state: ParticipantState,
  nowSeconds: number,
): { saved: ParticipantRow; sent: Promise<void> } {
  const client = rawClientOf(tx);
  const sent = client`
    with saved as (${stateUpdate(client, row, state, nowSeconds)} returning 1)
    select count(*) / count(*) as saved from saved`.execute();
  return {
    saved: savedRow(row, state, nowSeconds),
    sent: sent.then(
      () => undefined,
      (error: unknown) => {
        // 22012: division by zero, the guard's
        throw (error as { code?: string }).code === "22012" ? new Conflict(CHANGED_BY_ANOTHER) : error;
      },
    ),
  };
}
