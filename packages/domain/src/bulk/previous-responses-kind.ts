import { and, asc, eq, gt, lte, notInArray } from "drizzle-orm";
import { compileRules } from "@studyflow/engine";
import { STATUSES_EXCLUDED_FROM_BULK, participants, type PreviousResponsesInput } from "@studyflow/db";
import { RulesRejectedEvent } from "../events/rule-failures";
import { getStudy } from "../studies/study-repository";
import { BATCH_SIZE, CHUNK_SIZE, MAX_REPORTED_ERRORS } from "./bulk-tuning";
import { replayResponses } from "./participant-rule-run";
import { writeResultFile, type RunActionsResult } from "./result-store";
import { planParticipantChunks } from "./run-actions-kind";
import type { BatchTally, TaskKindDefinition } from "../tasks/task-kind";

/** Thrown inside a participant's savepoint to roll back its replay when a rule failed. */
class ReplayRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * A batch replays each participant's stored responses (replayResponses) in a savepoint of its
 * own: a participant whose rules failed keeps its state and is reported; the others are saved.
 * Row locks: a participant is read for update, so an event arriving meanwhile waits for the batch.
 */
const openReplayChunk: TaskKindDefinition["openChunk"] = async (db, task, options) => {
  const study = await getStudy(db, task.studyKey);
  const input = task.input as PreviousResponsesInput;
  const compiled = compileRules(input.rules);
  return {
    async runBatch(tx, { chunk, batchSize }) {
      const conditions = [
        eq(participants.studyKey, study.key),
        gt(participants.participantId, chunk.cursor),
        notInArray(participants.studyStatus, [...STATUSES_EXCLUDED_FROM_BULK]),
      ];
      if (chunk.to_key !== null) conditions.push(lte(participants.participantId, chunk.to_key));
      const rows = await tx
        .select()
        .from(participants)
        .where(and(...conditions))
        .orderBy(asc(participants.participantId))
        .limit(batchSize)
        .for("update");
      const tally: BatchTally = { processed: rows.length, changedPerRule: [], errors: [], errorCount: 0 };
      for (const row of rows) {
        await tx
          .transaction(async (savepoint) => {
            try {
              await replayResponses(savepoint, study, row, compiled, input, options);
            } catch (error) {
              if (error instanceof RulesRejectedEvent) throw new ReplayRejected(error.message);
              throw error;
            }
          })
          .catch((error: unknown) => {
            if (!(error instanceof ReplayRejected)) throw error;
            tally.errorCount += 1;
            if (tally.errors.length < MAX_REPORTED_ERRORS) {
              tally.errors.push({ participantId: row.participantId, error: error.reason });
            }
          });
      }
      const last = rows.at(-1);
      return {
        last: last ? last.participantId : chunk.cursor,
        finished: rows.length < batchSize,
        tally,
        ranIn: "engine",
      };
    },
  };
};

/** The result document: participants processed, errors, duration; no per-rule counts (as case-backend). */
const finalizeReplay: TaskKindDefinition["finalize"] = async (_tx, task, chunks, context) => {
  const input = task.input as PreviousResponsesInput;
  const result: RunActionsResult = {
    participantCount: chunks.reduce((sum, chunk) => sum + chunk.processedCount, 0),
    participantStateChangedPerRule: new Array<number>(input.rules.length).fill(0),
    errorCount: chunks.reduce((sum, chunk) => sum + chunk.errorCount, 0),
    errors: chunks.flatMap((chunk) => chunk.errors).slice(0, MAX_REPORTED_ERRORS),
    durationMs: Math.max(0, context.clock() - (task.startedAt ?? task.createdAt).getTime()),
    dryRun: false,
  };
  const resultFile = await writeResultFile(context.resultDir, task.studyKey, task.id, result);
  return { resultFile, processedCount: result.participantCount };
};

/**
 * A researcher's rules replayed over the stored responses of every participant but deleted
 * accounts and temporary participants (case-backend also replays those), as SUBMIT events.
 */
export const previousResponsesKind: TaskKindDefinition = {
  writesParticipants: true,
  skipWhenBusy: false,
  chunkSize: CHUNK_SIZE,
  batchSize: BATCH_SIZE,
  plan: planParticipantChunks,
  openChunk: openReplayChunk,
  finalize: finalizeReplay,
};
