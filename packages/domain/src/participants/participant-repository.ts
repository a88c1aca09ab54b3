import { and, eq, sql } from "drizzle-orm";
import type { ParticipantState } from "@studyflow/engine";
import { participants, pickParticipantFields, type Executor } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import { syncMessageSchedule } from "../messages/message-schedule";

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
  const [saved] = await tx
    .update(participants)
    .set({
      currentStudySession: state.currentStudySession,
      studyStatus: state.studyStatus,
      enteredAt: state.enteredAt,
      modifiedAt: nowSeconds,
      flags: state.flags,
      linkingCodes: state.linkingCodes,
      assignedSurveys: state.assignedSurveys,
      lastSubmissions: state.lastSubmissions,
      messages: state.messages,
      version: sql`${participants.version} + 1`,
    })
    .where(and(eq(participants.id, row.id), eq(participants.version, row.version)))
    .returning();
  if (!saved) throw new Conflict("participant was changed by another request; retry");
  await syncMessageSchedule(tx, [
    { studyKey: saved.studyKey, participantId: saved.participantId, before: row.messages, after: state.messages },
  ]);
  return saved;
}
