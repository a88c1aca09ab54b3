import { and, asc, eq, inArray, lte } from "drizzle-orm";
import type { ParticipantMessage, ParticipantState } from "@studyflow/engine";
import {
  outgoingMessages,
  participantMessageSchedule,
  participants,
  studies,
  type Database,
  type Executor,
} from "@studyflow/db";
import { confidentialIdInStudy, type StudyIdKeys } from "../participants/participant-ids";
import { saveParticipantState, toEngineState, type ParticipantRow } from "../participants/participant-repository";
import { SEND_MESSAGE_NOW_VALIDITY_MS, hasMessageTemplate, noTemplateError } from "../rules/message-refusal";
import { scheduleOf } from "../participants/message-schedule";

/**
 * Schedule rows taken per transaction. Each message costs a few statements (outbox row, state
 * write, index row) while the transaction holds the rows' locks; a concurrent event on one of
 * these participants waits for that long, so a transaction stays in the tens of milliseconds.
 */
export const DUE_MESSAGES_PER_TRANSACTION = 20;

export interface DueMessagesRound {
  /** Schedule rows found due and locked. */
  claimed: number;
  /** Messages that became outbox e-mails (pending). */
  queued: number;
  /** Messages without any template for their type: dropped, recorded as a failed outbox row. */
  withoutTemplate: number;
  /** Due rows of participants an event held locked: left for the next round. */
  busy: number;
  /** Rows that no message backed any more, or whose message is due later: deleted or moved. */
  stale: number;
}

/**
 * The values a scheduled message's template can use, from the participant's state when it is
 * sent: the study key, `flags.KEY` and `linkingCodes.KEY`, as SEND_MESSAGE_NOW's payload has them
 * (it adds `eventData.KEY` from its event, which a scheduled message does not have).
 */
export function participantMessagePayload(studyKey: string, state: ParticipantState): Record<string, string> {
  return Object.fromEntries([
    ["studyKey", studyKey],
    ...Object.entries(state.flags).map(([key, value]) => [`flags.${key}`, String(value)]),
    ...Object.entries(state.linkingCodes).map(([key, value]) => [`linkingCodes.${key}`, String(value)]),
  ]) as Record<string, string>;
}

type ScheduleRow = typeof participantMessageSchedule.$inferSelect;

interface StudyForMessages extends StudyIdKeys {
  /** Message type → whether the study has a template for it, looked up once per transaction. */
  hasTemplate: Map<string, boolean>;
}

async function loadStudies(tx: Executor, keys: string[]): Promise<Map<string, StudyForMessages>> {
  const rows = await tx
    .select({ key: studies.key, secret: studies.secret, idMappingMethod: studies.idMappingMethod })
    .from(studies)
    .where(inArray(studies.key, keys));
  return new Map(rows.map((row) => [row.key, { ...row, hasTemplate: new Map() }]));
}

async function hasTemplate(tx: Executor, studyKey: string, study: StudyForMessages, messageType: string) {
  let known = study.hasTemplate.get(messageType);
  if (known === undefined) {
    known = await hasMessageTemplate(tx, studyKey, messageType);
    study.hasTemplate.set(messageType, known);
  }
  return known;
}

/**
 * Sends one participant's claimed due messages: each becomes an outbox row, and all of them leave
 * the participant's `messages` in one version-guarded write (which also deletes their index rows).
 */
async function sendParticipantMessages(
  tx: Executor,
  row: ParticipantRow,
  claimed: readonly ScheduleRow[],
  study: StudyForMessages,
  nowMs: number,
  round: DueMessagesRound,
): Promise<void> {
  const nowSeconds = Math.floor(nowMs / 1000);
  const state = toEngineState(row);
  const claimedIds = new Set(claimed.map((entry) => entry.messageId));
  // The participant's messages are the truth; the index only said where to look.
  const isDue = (message: ParticipantMessage) => claimedIds.has(message.id) && message.scheduledFor <= nowSeconds;
  const due = state.messages.filter(isDue);

  const payload = participantMessagePayload(row.studyKey, state);
  const confidentialId = confidentialIdInStudy(study, row.participantId);
  for (const message of due) {
    const templated = await hasTemplate(tx, row.studyKey, study, message.type);
    await tx.insert(outgoingMessages).values({
      template: message.type,
      studyKey: row.studyKey,
      confidentialId,
      payload,
      expiresAt: new Date(nowMs + SEND_MESSAGE_NOW_VALIDITY_MS),
      ...(templated ? {} : { status: "failed" as const, lastError: noTemplateError(row.studyKey, message.type) }),
    });
    round[templated ? "queued" : "withoutTemplate"] += 1;
  }
  if (due.length > 0) {
    await saveParticipantState(tx, row, { ...state, messages: state.messages.filter((m) => !isDue(m)) }, nowSeconds);
  }

  // Claimed rows whose message is not due after all: out of line with the state, brought back.
  const remaining = scheduleOf(state.messages.filter((m) => !isDue(m)));
  for (const entry of claimed) {
    if (due.some((message) => message.id === entry.messageId)) continue;
    const key = and(
      eq(participantMessageSchedule.studyKey, entry.studyKey),
      eq(participantMessageSchedule.participantId, entry.participantId),
      eq(participantMessageSchedule.messageId, entry.messageId),
    );
    const truth = remaining.get(entry.messageId);
    if (truth === undefined) await tx.delete(participantMessageSchedule).where(key);
    else await tx.update(participantMessageSchedule).set(truth).where(key);
    round.stale += 1;
  }
}

/**
 * The due schedule rows, oldest first, by the due-time index (participant_message_schedule_due_idx:
 * a range scan that stops after `limit` rows, whatever the number of participants), locked.
 * SKIP LOCKED: rows another sender holds, or that an event is rewriting right now, are not
 * waited for. Exported so that a test can check the plan.
 */
export function dueScheduleRows(tx: Executor, nowSeconds: number, limit: number) {
  return tx
    .select()
    .from(participantMessageSchedule)
    .where(lte(participantMessageSchedule.dueAt, nowSeconds))
    .orderBy(asc(participantMessageSchedule.dueAt))
    .limit(limit)
    .for("update", { skipLocked: true });
}

async function queueBatch(db: Database, nowMs: number, batchSize: number): Promise<DueMessagesRound> {
  const round: DueMessagesRound = { claimed: 0, queued: 0, withoutTemplate: 0, busy: 0, stale: 0 };
  await db.transaction(async (tx) => {
    const due = await dueScheduleRows(tx, Math.floor(nowMs / 1000), batchSize);
    round.claimed = due.length;
    if (due.length === 0) return;

    const byParticipant = new Map<string, ScheduleRow[]>();
    for (const entry of due) {
      const key = JSON.stringify([entry.studyKey, entry.participantId]);
      byParticipant.set(key, [...(byParticipant.get(key) ?? []), entry]);
    }
    const studyRows = await loadStudies(tx, [...new Set(due.map((entry) => entry.studyKey))]);
    for (const claimed of byParticipant.values()) {
      const first = claimed[0]!;
      const study = studyRows.get(first.studyKey);
      // Events lock the participant before they touch its index rows; here the index rows are
      // locked first, so the participant's lock is only tried (SKIP LOCKED), never waited for:
      // the two orders can then never deadlock. A busy participant's messages wait a round.
      const [row] = await tx
        .select()
        .from(participants)
        .where(and(eq(participants.studyKey, first.studyKey), eq(participants.participantId, first.participantId)))
        .limit(1)
        .for("update", { skipLocked: true });
      if (!row || !study) {
        round.busy += claimed.length;
        continue;
      }
      await sendParticipantMessages(tx, row, claimed, study, nowMs, round);
    }
  });
  return round;
}

/**
 * Turns due scheduled messages (ADD_MESSAGE's, scheduledFor ≤ now) into outbox e-mails, at most
 * `limit` schedule rows, in transactions of {@link DUE_MESSAGES_PER_TRANSACTION}. In each, for each
 * participant: its row is locked and its `messages` re-read, every due message becomes an outbox
 * row (rendered at delivery with the study's template for its type, in the recipient's language)
 * and leaves `messages` in a version-guarded write, and its index row goes. The outbox row and
 * the removal commit together: a message is queued at most once, and an event on the same
 * participant either waits for the transaction or is waited for (never overwritten).
 *
 * A message type without any template is not sent and not kept: its outbox row is written
 * `failed` with the reason (see {@link noTemplateError}), so it shows where failed mails show.
 */
export async function queueDueParticipantMessages(
  db: Database,
  nowMs: number,
  limit: number,
): Promise<DueMessagesRound> {
  const total: DueMessagesRound = { claimed: 0, queued: 0, withoutTemplate: 0, busy: 0, stale: 0 };
  while (total.claimed < limit) {
    const batchSize = Math.min(DUE_MESSAGES_PER_TRANSACTION, limit - total.claimed);
    const round = await queueBatch(db, nowMs, batchSize);
    for (const key of Object.keys(total) as (keyof DueMessagesRound)[]) total[key] += round[key];
    // fewer than asked: nothing more is due (or the rest is locked by another sender)
    if (round.claimed < batchSize) break;
    // only busy participants: their rows come first again, so stop until the next round
    if (round.busy === round.claimed) break;
  }
  return total;
}
