import { sql } from "drizzle-orm";
import type { ParticipantMessage } from "@studyflow/engine";
import type { Executor } from "@studyflow/db";

/**
 * The due-time index of scheduled participant messages (`participant_message_schedule`): one row
 * per message id in a participant's `messages`, with its type and scheduledFor. Every write of a
 * participant's state that changes its messages brings the rows in line in the same transaction
 * (saveParticipantState for single events, writeChangedParticipants for bulk batches), so the
 * sender finds due messages with an index range scan instead of reading every participant's JSON.
 */

export interface ScheduleEntry {
  messageType: string;
  /** Unix seconds. */
  dueAt: number;
}

/**
 * The schedule rows a `messages` value stands for, by message id. Entries without a usable id or
 * time (a hand-edited or imported state) have no row, as the migration's backfill leaves them
 * out; an id listed twice is due at its earliest time.
 */
export function scheduleOf(messages: readonly ParticipantMessage[] | null | undefined): Map<string, ScheduleEntry> {
  const schedule = new Map<string, ScheduleEntry>();
  if (!Array.isArray(messages)) return schedule;
  for (const message of messages as readonly unknown[]) {
    if (typeof message !== "object" || message === null) continue;
    const { id, type, scheduledFor } = message as Partial<Record<keyof ParticipantMessage, unknown>>;
    if (typeof id !== "string" || id === "" || typeof scheduledFor !== "number") continue;
    if (!Number.isSafeInteger(scheduledFor)) continue;
    const known = schedule.get(id);
    if (known && known.dueAt <= scheduledFor) continue;
    schedule.set(id, { messageType: typeof type === "string" ? type : "", dueAt: scheduledFor });
  }
  return schedule;
}

/** One participant's messages before and after a write. */
export interface MessagesWrite {
  studyKey: string;
  participantId: string;
  before: readonly ParticipantMessage[] | null | undefined;
  after: readonly ParticipantMessage[] | null | undefined;
}

interface RemovedRow {
  study_key: string;
  participant_id: string;
  message_id: string;
}
interface UpsertedRow extends RemovedRow {
  message_type: string;
  due_at: number;
}

/** The rows to delete (ids gone) and to write (ids new, or with another type or time). */
export function scheduleChanges(write: MessagesWrite): { removed: RemovedRow[]; upserted: UpsertedRow[] } {
  const removed: RemovedRow[] = [];
  const upserted: UpsertedRow[] = [];
  // The engine copies on write: messages a rule did not touch are the very same array.
  if (write.before === write.after) return { removed, upserted };
  const before = scheduleOf(write.before);
  const after = scheduleOf(write.after);
  const key = { study_key: write.studyKey, participant_id: write.participantId };
  for (const id of before.keys()) if (!after.has(id)) removed.push({ ...key, message_id: id });
  for (const [id, entry] of after) {
    const was = before.get(id);
    if (was?.dueAt === entry.dueAt && was.messageType === entry.messageType) continue;
    upserted.push({ ...key, message_id: id, message_type: entry.messageType, due_at: entry.dueAt });
  }
  return { removed, upserted };
}

/**
 * Brings the schedule rows of the written participants in line with their new messages, in one
 * statement whatever the number of participants, and none when no message changed. The deleted
 * and the written keys never overlap (an id is either gone or still there), so the statement's
 * two parts cannot meet on a row. Call it in the transaction that writes the participants, after
 * the write: it holds their row locks, so no other writer interleaves.
 */
export async function syncMessageSchedule(tx: Executor, writes: readonly MessagesWrite[]): Promise<void> {
  const removed: RemovedRow[] = [];
  const upserted: UpsertedRow[] = [];
  for (const write of writes) {
    const changes = scheduleChanges(write);
    removed.push(...changes.removed);
    upserted.push(...changes.upserted);
  }
  if (removed.length === 0 && upserted.length === 0) return;
  // JSON parameters, as the bulk write does: one parameter per list, whatever its length.
  await tx.execute(sql`
    with removed as (
      delete from participant_message_schedule as s
      using jsonb_to_recordset(${JSON.stringify(removed)}::text::jsonb)
        as r(study_key text, participant_id text, message_id text)
      where s.study_key = r.study_key and s.participant_id = r.participant_id and s.message_id = r.message_id
    )
    insert into participant_message_schedule (study_key, participant_id, message_id, message_type, due_at)
    select u.study_key, u.participant_id, u.message_id, u.message_type, u.due_at
    from jsonb_to_recordset(${JSON.stringify(upserted)}::text::jsonb)
      as u(study_key text, participant_id text, message_id text, message_type text, due_at bigint)
    on conflict (study_key, participant_id, message_id)
      do update set message_type = excluded.message_type, due_at = excluded.due_at`);
}
