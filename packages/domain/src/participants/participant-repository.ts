import { and, eq } from "drizzle-orm";
import type { ParticipantState } from "@studyflow/engine";
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
import { syncMessageSchedule } from "./message-schedule";

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

/** A participants row as postgres.js returns it to the statements below: bigint as text. */
interface RawParticipant {
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

function participantFromRaw(raw: RawParticipant): ParticipantRow {
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
 * Writes a new state guarded by the version that was read: a concurrent writer makes this a
 * Conflict instead of a lost update. Changed messages update their due-time index
 * (participant_message_schedule) in the same transaction.
 */
export async function saveParticipantState(
  tx: Executor,
  row: ParticipantRow,
  state: ParticipantState,
  nowSeconds: number,
): Promise<ParticipantRow> {
  // JSON goes as text cast to jsonb: the prepared statement's parameter types stay fixed.
  const [raw] = await rawClientOf(tx)<RawParticipant[]>`
    update participants set
      current_study_session = ${state.currentStudySession}, study_status = ${state.studyStatus},
      entered_at = ${state.enteredAt}, modified_at = ${nowSeconds},
      flags = ${JSON.stringify(state.flags)}::text::jsonb,
      linking_codes = ${JSON.stringify(state.linkingCodes)}::text::jsonb,
      assigned_surveys = ${JSON.stringify(state.assignedSurveys)}::text::jsonb,
      last_submissions = ${JSON.stringify(state.lastSubmissions)}::text::jsonb,
      messages = ${JSON.stringify(state.messages)}::text::jsonb,
      version = version + 1
    where id = ${row.id} and version = ${row.version}
    returning id, study_key, participant_id, current_study_session, entered_at, modified_at, study_status,
      flags, linking_codes, assigned_surveys, last_submissions, messages, hashed_account_id, is_main_profile, version`;
  const saved = raw ? participantFromRaw(raw) : undefined;
  if (!saved) throw new Conflict("participant was changed by another request; retry");
  await syncMessageSchedule(tx, [
    { studyKey: saved.studyKey, participantId: saved.participantId, before: row.messages, after: state.messages },
  ]);
  return saved;
}
