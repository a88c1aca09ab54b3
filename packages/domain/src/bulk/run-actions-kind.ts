import { sql } from "drizzle-orm";
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
import { executePrepared, rawClientOf, type Executor } from "@studyflow/db";
import { isTimerTask, taskRuleSet } from "../tasks/task-rules";
import { EXCLUDED_FROM_BULK } from "../tasks/task-service";
import { engineEnvFor, type DomainContext } from "../events/event-runner";
import { confidentialIdInStudy, type StudyIdKeys } from "../participants/participant-ids";
import { persistEffects, persistReports } from "../events/persist-outcome";
import { getStudy } from "../studies/study-repository";
import { failuresOf, recordRuleFailures, type RuleFailureRecord } from "../events/rule-failures";
import {
  BATCH_SIZE,
  CHUNK_SIZE,
  DATABASE_BATCH_SIZE,
  MAX_RECORDED_FAILURES_PER_BATCH,
  MAX_REPORTED_ERRORS,
} from "./bulk-tuning";
import {
  batchRowToState,
  countEligibleInRange,
  eligibleForBulk,
  readBatch,
  writeChangedParticipants,
  type BatchRange,
  type BatchRow,
  type ChangedParticipant,
} from "./participant-batch";
import { renderPrefilter } from "./prefilter-sql";
import { runPushdownBatch } from "./pushdown-sql";
import { writeResultFile, type RunActionsResult } from "./result-store";
import { VersionConflict, type BatchTally, type ChunkBatchStep, type TaskKindDefinition } from "../tasks/task-kind";

/**
 * A bulk run's event for one participant. Its confidential id is an HMAC, and few rules read it
 * (confidential responses, SEND_MESSAGE_NOW): it is derived when a rule asks, not for each of a
 * million participants.
 */
class BulkEvent implements StudyEvent {
  #confidentialId: string | undefined;
  readonly studyKey: string;

  constructor(
    readonly type: StudyEvent["type"],
    private readonly study: StudyIdKeys,
    private readonly participantId: string,
  ) {
    this.studyKey = study.key;
  }

  get participantIDForConfidentialResponses(): string {
    this.#confidentialId ??= confidentialIdInStudy(this.study, this.participantId);
    return this.#confidentialId;
  }
}

/** Thrown to roll back a dry run's evaluation savepoint. */
class DryRunRollback extends Error {}

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
 * Sampled participants per chunk (at least SAMPLE_MIN in all) when boundaries are sampled. The
 * sample takes whole pages, so participants whose keys run in insertion order come in runs: at a
 * million, 400 per chunk gave chunks of 17,000–34,000 (200: 12,000–40,000).
 */
const SAMPLE_PER_CHUNK = 400;
const SAMPLE_MIN = 4_000;
/**
 * Index entries a walk steps over for the cost of one page the sample reads: measured 60–150 (the
 * sample's sort included); 20 keeps the choice on the safe side.
 */
const ENTRIES_PER_SAMPLED_PAGE = 20;

/**
 * Chunk boundaries at the quantiles of a sample of the study's eligible participants, or null when
 * a sample would cost more than walking the index (a study that is a small part of the table) or
 * came back too thin to place them. PostgreSQL's block sample (TABLESAMPLE SYSTEM) reads a few
 * pages of the table: measured in backend CPU, 5.5 ms where the walk takes 9.7 ms on 100,000
 * participants, 9 ms where it takes 90 ms on a million; the walk is serial work before any chunk
 * can start. Chunks come out about equal rather than exactly equal, which is all the split between
 * workers needs: any increasing keys split the key space into ranges that cover every participant once.
 * `tablePages` is the table's size in pages (pg_class.relpages), read here when not given.
 */
export async function sampledChunkBoundaries(
  tx: Executor,
  studyKey: string,
  chunkSize: number,
  targetCount: number,
  tablePages?: number,
): Promise<string[] | null> {
  const chunks = Math.ceil(targetCount / chunkSize);
  const wanted = Math.max(SAMPLE_MIN, chunks * SAMPLE_PER_CHUNK);
  const percent = Math.min(100, (100 * wanted) / targetCount);
  const pages = tablePages ?? (await tablePagesOf(tx));
  const pagesRead = (pages * percent) / 100;
  if (!(pagesRead > 0) || pagesRead * ENTRIES_PER_SAMPLED_PAGE >= targetCount) return null;
  const fractions = Array.from({ length: chunks - 1 }, (_, i) => (i + 1) / chunks);
  // the quantiles in the column's own order, the order of every range comparison of the chunks
  const [sample] = await executePrepared<{ sampled: number; bounds: string | null }>(
    tx,
    sql`
    select count(*)::int as sampled, array_to_json(
        percentile_disc(${`{${fractions.join(",")}}`}::float8[]) within group (order by participant_id))::text as bounds
    from participants tablesample system (${percent}::float4)
    where study_key = ${studyKey} and ${eligibleForBulk}`,
  );
  if (!sample?.bounds || sample.sampled < wanted / 4) return null;
  // increasing already; a key drawn for two quantiles is one boundary
  return (JSON.parse(sample.bounds) as string[]).filter((bound, i, all) => i === 0 || bound !== all[i - 1]);
}

async function tablePagesOf(tx: Executor): Promise<number> {
  const [table] = await rawClientOf(tx)<{ pages: number }[]>`
    select relpages::float8 as pages from pg_class where oid = 'participants'::regclass`;
  return table?.pages ?? 0;
}

/**
 * Every `chunkSize`-th eligible participant key of the study, in key order. Each step jumps
 * `chunkSize` keys from the last boundary in participants_bulk_eligible_idx, reading the index
 * alone: on a million participants 0.12 s, where numbering every eligible row with a window
 * function visited each row for its status (1.3–1.8 s).
 */
async function walkedChunkBoundaries(tx: Executor, studyKey: string, chunkSize: number): Promise<string[]> {
  const rows = await tx.execute<{ participant_id: string }>(sql`
    with recursive boundary(participant_id) as (
      (select participant_id from participants where study_key = ${studyKey} and ${eligibleForBulk}
        order by participant_id offset ${chunkSize - 1} limit 1)
      union all
      (select (select p.participant_id from participants p
          where p.study_key = ${studyKey} and p.participant_id > boundary.participant_id and ${eligibleForBulk}
          order by p.participant_id offset ${chunkSize - 1} limit 1)
        from boundary where boundary.participant_id is not null)
    )
    select participant_id from boundary where participant_id is not null`);
  return rows.map((row) => row.participant_id);
}

/**
 * Boundaries that split the study's eligible participants into chunks of about `chunkSize`
 * (sampled where that is cheaper, else walked), but none with no participant after it: the
 * open-ended chunk after the study's last participant would start empty and cost a job for nothing.
 */
async function chunkBoundaries(
  tx: Executor,
  studyKey: string,
  chunkSize: number,
  targetCount: number,
  tablePages: number,
): Promise<string[]> {
  const boundaries =
    (await sampledChunkBoundaries(tx, studyKey, chunkSize, targetCount, tablePages)) ??
    (await walkedChunkBoundaries(tx, studyKey, chunkSize));
  if (boundaries.length === 0) return boundaries;
  // Unprepared on purpose: planned for the boundary it is given, this is one step in the index. A
  // plan made for any boundary (a prepared statement's generic plan, or the boundary computed in
  // the sample's statement) may scan the table from its start, as a key past a third of the keys
  // is assumed near: 0.6 s at a million.
  const [after] = await tx.execute<{ found: boolean }>(sql`
    select exists (select 1 from participants
      where study_key = ${studyKey} and participant_id > ${boundaries.at(-1)} and ${eligibleForBulk}) as found`);
  return after?.found ? boundaries : boundaries.slice(0, -1);
}

/**
 * A bulk rule run's batch step: the next participants after the checkpoint that the rules'
 * prefilter selects (the engine's bulkPrefilter), evaluated and written with their reports,
 * counters and messages. The others, passed over by the same keyset read, would have done nothing,
 * and are counted as processed. Every batch is evaluated at one instant, the one its prefilter
 * compared times with.
 */
const openRuleChunk: TaskKindDefinition["openChunk"] = async (db, task, options): Promise<ChunkBatchStep> => {
  const study = await getStudy(db, task.studyKey);
  const ruleSet = await taskRuleSet(db, task);
  const { eventType, onRuleError, dryRun } = ruleSet;
  const compiled = compiledRulesOf(task.id, ruleSet.rules);
  const fields = fieldsUsedBy(ruleSet.rules, { eventType });
  // a tick's failing rule is skipped; a run-actions participant whose rule failed is left as it was
  const failureOutcome = onRuleError === "continue" ? "rule-skipped" : "event-rejected";
  // A batch the database could not decide goes to the engine; so do the rest of this chunk's, as
  // their rows are likely alike.
  let tryDatabase = options.writesInDatabase !== false;

  return {
    async runBatch(tx, { chunk, batchSize, lock }) {
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
      const range: BatchRange = {
        studyKey: study.key,
        after: chunk.cursor,
        upTo: chunk.to_key,
        limit: batchSize,
        lock,
        fields,
        ...(selectsAll ? {} : { where: renderPrefilter(prefilter) }),
      };

      // A batch the database runs covers DATABASE_BATCH_SIZE participants (or the batch size the
      // caller set): its rows never cross the wire. One that selects nothing is counted below,
      // without a read.
      const databaseBatch = options.batchSize ?? DATABASE_BATCH_SIZE;
      const pushed =
        plan && !selectsNone
          ? await runPushdownBatch(tx, { ...range, limit: databaseBatch, plan, dryRun, nowSeconds })
          : undefined;
      // undecided: some condition the translation could not tell; the engine runs the batch
      if (pushed?.undecided) tryDatabase = false;
      if (pushed && !pushed.undecided) {
        if (!dryRun && pushed.written !== pushed.changed) throw new VersionConflict();
        const tally: BatchTally = {
          processed: pushed.size,
          changedPerRule: pushed.changedPerRule,
          errors: [],
          errorCount: 0,
        };
        return {
          last: pushed.last ?? chunk.cursor,
          finished: pushed.size < databaseBatch,
          tally,
          ranIn: "database",
        };
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
          const event = new BulkEvent(eventType, study, row.participant_id);
          const outcome = await applyRules(compiled, before, event, env, { onRuleError });
          if ((outcome.error || outcome.skippedActions) && failures.length < MAX_RECORDED_FAILURES_PER_BATCH) {
            const found = failuresOf(
              outcome,
              {
                studyKey: study.key,
                participantId: row.participant_id,
                rulesVersion: ruleSet.rulesVersion,
                event,
                taskId: task.id,
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
      return {
        last: last ? last.participant_id : chunk.cursor,
        finished,
        tally,
        // a dry run writes nothing, failures included
        failures: dryRun ? [] : failures,
        ranIn: "engine",
      };
    },
  };
};

/** The result document of a bulk rule run: counts per rule, errors, duration; a tick names its slot. */
const finalizeRuleRun: TaskKindDefinition["finalize"] = async (tx, task, chunks, context) => {
  const ruleSet = await taskRuleSet(tx, task);
  const ruleCount = ruleSet.rules.length;
  const changed = new Array<number>(ruleCount).fill(0);
  for (const chunk of chunks) {
    chunk.changedPerRule.forEach((count, index) => {
      if (index < ruleCount) changed[index] = (changed[index] ?? 0) + count;
    });
  }
  const finishedAt = context.clock();
  const result: RunActionsResult = {
    participantCount: chunks.reduce((sum, chunk) => sum + chunk.processedCount, 0),
    participantStateChangedPerRule: changed,
    errorCount: chunks.reduce((sum, chunk) => sum + chunk.errorCount, 0),
    errors: chunks.flatMap((chunk) => chunk.errors).slice(0, MAX_REPORTED_ERRORS),
    durationMs: Math.max(0, finishedAt - (task.startedAt ?? task.createdAt).getTime()),
    dryRun: ruleSet.dryRun,
    ...(isTimerTask(task) ? { tick: { dueAt: task.input.dueAt, rulesVersion: task.input.rulesVersion } } : {}),
  };
  // Result documents stay small files in RESULT_DIR, where the run-actions result routes read them.
  const resultFile = await writeResultFile(context.resultDir, task.studyKey, task.id, result);
  return { resultFile, processedCount: result.participantCount };
};

export const planParticipantChunks: TaskKindDefinition["plan"] = async (tx, task, chunkSize) => {
  // the eligible participants (as countEligibleParticipants counts them) and the table's size, for
  // the choice between sampling and walking, in one round trip
  const [sizes] = await rawClientOf(tx)<{ target: number; pages: number }[]>`
    select (select coalesce(sum(count), 0)::int from study_participant_counts
        where study_key = ${task.studyKey} and study_status <> all(${`{${EXCLUDED_FROM_BULK.join(",")}}`}::text[])) as target,
      (select relpages::float8 from pg_class where oid = 'participants'::regclass) as pages`;
  const targetCount = sizes?.target ?? 0;
  const boundaries =
    targetCount > chunkSize ? await chunkBoundaries(tx, task.studyKey, chunkSize, targetCount, sizes?.pages ?? 0) : [];
  return { targetCount, boundaries };
};

/** A researcher's rules over every eligible participant, with a CUSTOM event. */
export const runActionsKind: TaskKindDefinition = {
  writesParticipants: true,
  skipWhenBusy: false,
  chunkSize: CHUNK_SIZE,
  batchSize: BATCH_SIZE,
  plan: planParticipantChunks,
  openChunk: openRuleChunk,
  finalize: finalizeRuleRun,
};

/**
 * One tick of the study timer: the TIMER event with the study's rules. A tick never waits: one
 * that finds another task ahead of it is skipped (the next slot's tick does its housekeeping), so
 * ticks never pile up behind a long run.
 */
export const timerTickKind: TaskKindDefinition = { ...runActionsKind, skipWhenBusy: true };
