import { eq } from "drizzle-orm";
import {
  applyRules,
  bulkBatchPlan,
  compileRules,
  fieldsUsedBy,
  statesEqual,
  type CompiledRuleSet,
  type Report,
  type SideEffect,
  type StudyEvent,
} from "@studyflow/engine";
import { rawClientOf, tasks, type Database, type Executor } from "@studyflow/db";
import { taskRuleSet } from "../tasks/task-rules";
import { engineEnvFor, type DomainContext } from "../events/event-runner";
import { confidentialIdOf } from "../participants/participant-ids";
import { persistEffects, persistReports } from "../events/persist-outcome";
import { getStudy } from "../studies/study-repository";
import { failuresOf, recordRuleFailures, type RuleFailureRecord } from "../events/rule-failures";
import { BATCH_SIZE, MAX_RECORDED_FAILURES_PER_BATCH, MAX_REPORTED_ERRORS } from "./bulk-tuning";
import {
  batchRowToState,
  countEligibleInRange,
  readBatch,
  writeChangedParticipants,
  type BatchRange,
  type BatchRow,
  type ChangedParticipant,
} from "./participant-batch";
import { renderPrefilter } from "./prefilter-sql";
import { runPushdownBatch } from "./pushdown-sql";

export type ChunkOutcome = "done" | "canceled" | "stopped";

/** Where a batch's rules ran: in the database as one statement, or in the engine over read rows. */
export type BatchRunner = "database" | "engine";

export interface ChunkRunOptions extends DomainContext {
  batchSize?: number;
  /**
   * Called after every committed batch (e.g. to report job progress), with where it ran: in the
   * database (one statement, see pushdown-sql.ts) or in the engine.
   */
  onBatch?: (processedInChunk: number, batch: { ranIn: BatchRunner }) => Promise<void> | void;
  /**
   * Whether batches of flag, status and survey rules may run in the database (default true); false runs
   * every batch in the engine.
   */
  writesInDatabase?: boolean;
  /** Asked before every batch; true stops after the batch in flight (worker shutdown). */
  shouldStop?: () => boolean;
}

/** Thrown inside a batch transaction when a guarded write lost a race; rolls the batch back. */
class VersionConflict extends Error {}

/**
 * A bulk run's event for one participant. Its confidential id is an HMAC, and few rules read it
 * (confidential responses, SEND_MESSAGE_NOW): it is derived when a rule asks, not for each of a
 * million participants.
 */
class BulkEvent implements StudyEvent {
  #confidentialId: string | undefined;

  constructor(
    readonly type: StudyEvent["type"],
    readonly studyKey: string,
    private readonly studySecret: string,
    private readonly participantId: string,
  ) {}

  get participantIDForConfidentialResponses(): string {
    this.#confidentialId ??= confidentialIdOf(this.studySecret, this.participantId);
    return this.#confidentialId;
  }
}

/** The task_chunks columns a batch reads, as postgres.js returns them. */
interface RawChunk {
  status: string;
  cursor: string;
  to_key: string | null;
  processed_count: number;
  error_count: number;
  changed_per_rule: number[];
  errors: { participantId: string; error: string }[];
}
/** Thrown to roll back a dry run's evaluation savepoint. */
class DryRunRollback extends Error {}

interface BatchTally {
  processed: number;
  changedPerRule: number[];
  errors: { participantId: string; error: string }[];
  errorCount: number;
}

/**
 * Moves the chunk's checkpoint past a batch and adds its counts to the chunk and the task, in the
 * batch's transaction.
 */
async function recordBatch(
  tx: Executor,
  taskId: string,
  chunkIndex: number,
  chunk: RawChunk,
  batch: { last: string; finished: boolean; tally: BatchTally; at: Date },
): Promise<void> {
  const { tally } = batch;
  const mergedChanged = [...chunk.changed_per_rule];
  tally.changedPerRule.forEach((count, index) => {
    mergedChanged[index] = (mergedChanged[index] ?? 0) + (count ?? 0);
  });
  for (let index = 0; index < mergedChanged.length; index++) mergedChanged[index] ??= 0;
  await rawClientOf(tx)`
    update task_chunks set
      cursor = ${batch.last}, status = ${batch.finished ? "done" : "pending"},
      processed_count = ${chunk.processed_count + tally.processed},
      error_count = ${chunk.error_count + tally.errorCount},
      changed_per_rule = ${JSON.stringify(mergedChanged)}::text::jsonb,
      errors = ${JSON.stringify([...chunk.errors, ...tally.errors].slice(0, MAX_REPORTED_ERRORS))}::text::jsonb,
      updated_at = ${batch.at.toISOString()}
    where task_id = ${taskId} and chunk_index = ${chunkIndex}`;
  if (tally.processed > 0) {
    await rawClientOf(tx)`
      update tasks set processed_count = processed_count + ${tally.processed}, updated_at = ${batch.at.toISOString()}
      where id = ${taskId}`;
  }
}

const compiledByTask = new Map<string, CompiledRuleSet>();

function compiledRulesOf(taskId: string, rules: unknown[]): CompiledRuleSet {
  let compiled = compiledByTask.get(taskId);
  if (!compiled) {
    compiled = compileRules(rules);
    // One entry per task a process works on; a long-lived worker drops old ones.
    if (compiledByTask.size > 64) compiledByTask.clear();
    compiledByTask.set(taskId, compiled);
  }
  return compiled;
}

/**
 * Runs one key-range chunk of a bulk task (run-actions, or a timer tick) to its end, batch by batch. Each batch commits
 * its participants, reports, counters, messages, the chunk's checkpoint and the task's progress
 * in one transaction, so a process killed at any moment resumes exactly after the last committed
 * batch. The chunk row is locked per batch, so even two processes on one chunk never apply a
 * participant twice.
 *
 * A batch reads only the participants its rules' prefilter selects (the engine's bulkPrefilter):
 * the others, passed over by the same keyset read, would have done nothing, and are counted as
 * processed in the same transaction. Every batch is evaluated at one instant, the one its
 * prefilter compared times with.
 */
export async function processChunk(
  db: Database,
  taskId: string,
  chunkIndex: number,
  options: ChunkRunOptions,
): Promise<ChunkOutcome> {
  const [task] = await db.select().from(tasks).where(eq(tasks.id, taskId));
  if (!task || task.status !== "in_progress") return "canceled";
  const study = await getStudy(db, task.studyKey);
  const ruleSet = await taskRuleSet(db, task);
  const { eventType, onRuleError, dryRun } = ruleSet;
  const compiled = compiledRulesOf(taskId, ruleSet.rules);
  const batchSize = options.batchSize ?? BATCH_SIZE;
  const fields = fieldsUsedBy(ruleSet.rules, { eventType });
  // a tick's failing rule is skipped; a run-actions participant whose rule failed is left as it was
  const failureOutcome = onRuleError === "continue" ? "rule-skipped" : "event-rejected";
  let processedInChunk = 0;
  // A batch the database could not decide goes to the engine; so do the rest of this chunk's, as
  // their rows are likely alike.
  let tryDatabase = options.writesInDatabase !== false;

  for (;;) {
    // The per-batch bookkeeping statements are postgres.js's, prepared once per connection (see
    // rawClientOf): a batch of a million-participant run is a few dozen milliseconds, and drizzle's
    // unprepared statements cost a round trip more each.
    const [current] = await rawClientOf(db)<{ status: string }[]>`select status from tasks where id = ${taskId}`;
    if (current?.status !== "in_progress") return "canceled";
    if (options.shouldStop?.()) return "stopped";

    const runBatch = (lock: boolean) =>
      db.transaction(async (tx) => {
        const [chunk] = await rawClientOf(tx)<RawChunk[]>`
          select status, cursor, to_key, processed_count, error_count, changed_per_rule, errors
          from task_chunks where task_id = ${taskId} and chunk_index = ${chunkIndex} for update`;
        if (!chunk) throw new Error(`chunk ${chunkIndex} of task ${taskId} does not exist`);
        if (chunk.status === "done") return { finished: true, processed: 0, failures: [], ranIn: "engine" as const };

        // one instant for the batch: its prefilter and its evaluation see the same time
        const batchNow = options.clock();
        const batchContext: DomainContext = { ...options, clock: () => batchNow };
        // Rules that only write flags, the status and assigned surveys are run by the database, in one statement.
        const { prefilter, writes: plan } = await bulkBatchPlan(
          ruleSet.rules,
          { type: eventType, studyKey: study.key },
          engineEnvFor(tx, study, batchContext),
          { writes: tryDatabase },
        );
        const selectsAll = prefilter.kind === "const" && prefilter.value;
        const selectsNone = prefilter.kind === "const" && !prefilter.value;
        const nowSeconds = Math.floor(batchNow / 1000);
        // the batch: the next participants after the checkpoint that the prefilter selects
        const range: BatchRange = {
          studyKey: study.key,
          after: chunk.cursor,
          upTo: chunk.to_key,
          limit: batchSize,
          lock,
          fields,
          ...(selectsAll ? {} : { where: renderPrefilter(prefilter) }),
        };

        const pushed = plan && (await runPushdownBatch(tx, { ...range, plan, dryRun, nowSeconds }));
        // undecided: some condition the translation could not tell; the engine runs the batch
        if (pushed?.undecided) tryDatabase = false;
        if (pushed && !pushed.undecided) {
          if (!dryRun && pushed.written !== pushed.changed) throw new VersionConflict();
          const finished = pushed.read < batchSize;
          const processed = selectsAll
            ? pushed.read
            : (await countEligibleInRange(tx, {
                studyKey: study.key,
                after: chunk.cursor,
                upTo: finished ? chunk.to_key : pushed.last,
              })) + pushed.leftEligible;
          const tally: BatchTally = { processed, changedPerRule: pushed.changedPerRule, errors: [], errorCount: 0 };
          await recordBatch(tx, taskId, chunkIndex, chunk, {
            last: pushed.last ?? chunk.cursor,
            finished,
            tally,
            at: new Date(options.clock()),
          });
          return { finished, processed, failures: [], ranIn: "database" as const };
        }

        const rows: BatchRow[] = selectsNone ? [] : await readBatch(tx, range);
        const last = rows.at(-1);
        const finished = rows.length < batchSize;
        // the rows the prefilter passed over were evaluated too, in principle: they did nothing
        const processed = selectsAll
          ? rows.length
          : await countEligibleInRange(tx, {
              studyKey: study.key,
              after: chunk.cursor,
              upTo: finished ? chunk.to_key : (last as BatchRow).participant_id,
            });
        const tally: BatchTally = { processed, changedPerRule: [], errors: [], errorCount: 0 };
        const changed: ChangedParticipant[] = [];
        const reports: Report[] = [];
        const effects: SideEffect[] = [];
        const failures: RuleFailureRecord[] = [];

        const evaluate = async (executor: Executor) => {
          const env = engineEnvFor(executor, study, batchContext);
          for (const row of rows) {
            const before = batchRowToState(row);
            const event = new BulkEvent(eventType, study.key, study.secret, row.participant_id);
            const outcome = await applyRules(compiled, before, event, env, { onRuleError });
            if ((outcome.error || outcome.skippedActions) && failures.length < MAX_RECORDED_FAILURES_PER_BATCH) {
              const found = failuresOf(
                outcome,
                {
                  studyKey: study.key,
                  participantId: row.participant_id,
                  rulesVersion: ruleSet.rulesVersion,
                  event,
                  taskId,
                },
                failureOutcome,
              );
              failures.push(...found.slice(0, MAX_RECORDED_FAILURES_PER_BATCH - failures.length));
            }
            const problem = outcome.error ?? outcome.skippedActions?.[0];
            if (problem) {
              // Counted once per participant, named by its first failure.
              tally.errorCount += 1;
              if (tally.errors.length < MAX_REPORTED_ERRORS) {
                tally.errors.push({ participantId: row.participant_id, error: `${problem.path}: ${problem.message}` });
              }
            }
            // "stop": the participant stays as it was and the task goes on with the next one;
            // "continue": it keeps what its other rules did, as with a skipped action.
            if (outcome.error && onRuleError === "stop") continue;
            outcome.changedPerRule.forEach((didChange, index) => {
              if (didChange) tally.changedPerRule[index] = (tally.changedPerRule[index] ?? 0) + 1;
            });
            // No rule reporting a change means no change; only then is the deep comparison needed.
            if (outcome.changedPerRule.some(Boolean) && !statesEqual(before, outcome.state)) {
              changed.push({ id: row.id, version: row.version, before, state: outcome.state });
            }
            reports.push(...outcome.reports);
            effects.push(...outcome.effects);
          }
        };

        if (dryRun) {
          // Counters and code draws the rules make are undone with the savepoint: a dry run writes nothing.
          await tx
            .transaction(async (savepoint) => {
              await evaluate(savepoint);
              throw new DryRunRollback();
            })
            .catch((error: unknown) => {
              if (!(error instanceof DryRunRollback)) throw error;
            });
        } else {
          await evaluate(tx);
          const written = await writeChangedParticipants(tx, changed, nowSeconds);
          if (written !== changed.length) throw new VersionConflict();
          await persistReports(tx, { studyKey: study.key, eventType, reports });
          await persistEffects(tx, study.key, effects, batchNow);
          await recordRuleFailures(tx, failures, new Date(options.clock()));
        }

        await recordBatch(tx, taskId, chunkIndex, chunk, {
          last: last ? last.participant_id : chunk.cursor,
          finished,
          tally,
          at: new Date(options.clock()),
        });
        // a dry run writes nothing, failures included
        return { finished, processed: tally.processed, failures: dryRun ? [] : failures, ranIn: "engine" as const };
      });

    let batch: { finished: boolean; processed: number; failures: RuleFailureRecord[]; ranIn: BatchRunner };
    try {
      batch = await runBatch(false);
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      // An API request changed a participant between our read and write: the whole batch was rolled
      // back; read it again under row locks, so this time nobody can get in between.
      batch = await runBatch(true);
    }
    processedInChunk += batch.processed;
    if (batch.failures.length > 0) options.onRuleFailures?.(batch.failures);
    if (batch.processed > 0) await options.onBatch?.(processedInChunk, { ranIn: batch.ranIn });
    if (batch.finished) return "done";
  }
}
