// A batch of a bulk run made in the database: the engine's BulkWritePlan (rules that set or remove
// flags and set the study status with batch-constant values, under translatable conditions)
// rendered as one statement that selects the batch, runs the rules on each row in order, writes
// the rows that changed and counts what changed per rule. Nothing crosses the wire but counts.
//
// The statement is a chain of materialized steps, one per rule, each a row per participant of the
// batch: the state the rule leaves (flags, study_status), whether it changed the row, and whether
// the translation could not tell its condition (see the engine's bulk-writes.ts). A step renders
// its rule's condition with the prefilter's renderer over the previous step's columns, which carry
// the participants table's names; materializing each step keeps every step evaluated once per row.
//
// The write is guarded as the engine path's is: by the version each row was read with, so a row an
// API request changed meanwhile is left alone, and fewer rows written than changed means a lost
// race (the caller rolls back and runs the batch again under row locks). When some row cannot be
// told, nothing is written and the caller evaluates the batch in the engine.
import { sql, type SQL } from "drizzle-orm";
import type { BulkWritePlan, RuleWrites, StateWrite } from "@studyflow/engine";
import { executePrepared, type Executor, type ParticipantFieldName } from "@studyflow/db";
import { batchColumns, eligibleForBulk, type BatchRange } from "./participant-batch";
import { renderPrefilter } from "./prefilter-sql";

export interface PushdownBatch extends BatchRange {
  plan: BulkWritePlan;
  /** Count and compute only: the rows are not written. */
  dryRun: boolean;
  /** modified_at of the rows written. */
  nowSeconds: number;
}

export interface PushdownOutcome {
  /** Some row's condition could not be told: nothing was written, the batch needs the engine. */
  undecided: boolean;
  /** Participants of the batch (the rows the keyset read selected). */
  read: number;
  /** The last participant id of the batch. */
  last: string | null;
  changedPerRule: number[];
  /** Rows whose state the rules changed. */
  changed: number;
  /** Rows written: `changed` unless a concurrent writer got there first (or a dry run). */
  written: number;
  /** Written rows whose new status takes them out of bulk runs (their count was taken before). */
  leftEligible: number;
}

/** A rule's writes reduced to their net effect: the last write of each key and of the status wins. */
function netWrites(writes: readonly StateWrite[]) {
  const flags = new Map<string, string | null>();
  let status: string | undefined;
  for (const write of writes) {
    if (write.kind === "set-flag") flags.set(write.key, write.value);
    else if (write.kind === "remove-flag") flags.set(write.key, null);
    else status = write.status;
  }
  const set: Record<string, string> = {};
  const removed: string[] = [];
  for (const [key, value] of flags) {
    if (value === null) removed.push(key);
    else Object.defineProperty(set, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return { set, removed, status };
}

const or = (parts: SQL[]) => (parts.length === 0 ? sql`false` : sql.join(parts, sql` or `));

/**
 * One rule's step over the previous step `from`: its condition's two predicates are computed once
 * per row (the `offset 0` keeps the planner from copying them into every use), then the rule's
 * writes where the condition surely holds.
 */
function ruleStep(rule: RuleWrites, index: number, carried: readonly string[], from: string): SQL {
  const { set, removed, status } = netWrites(rule.writes);
  const hasSet = Object.keys(set).length > 0;
  const setJson = sql`${JSON.stringify(set)}::jsonb`;
  let flags = sql`flags`;
  for (const key of removed) flags = sql`(${flags} - ${key}::text)`;
  if (hasSet) flags = sql`(${flags} || ${setJson})`;
  const flagsChanged = or([
    ...removed.map((key) => sql`flags ? ${key}::text`),
    ...(hasSet ? [sql`not flags @> ${setJson}`] : []),
  ]);
  const statusChanged = status === undefined ? sql`false` : sql`study_status <> ${status}::text`;
  const newStatus =
    status === undefined ? sql`study_status` : sql`case when sure then ${status}::text else study_status end`;
  const kept = sql.raw(carried.filter((column) => column !== "flags" && column !== "study_status").join(", "));
  return sql`
    select ${kept},
      case when sure then ${flags} else flags end as flags,
      ${newStatus} as study_status,
      sure and (${flagsChanged} or ${statusChanged}) as ${sql.raw(`r${index}`)},
      undecided or (holds and not sure) as undecided
    from (
      select *, holds and not otherwise as sure
      from (select *, ${renderPrefilter(rule.holds)} as holds, ${renderPrefilter(rule.otherwise)} as otherwise
            from ${sql.raw(from)} offset 0) as conditions
      offset 0
    ) as rule`;
}

/**
 * Runs a batch of the plan: the next `limit` eligible participants after `after` (up to `upTo`)
 * that `where` selects, in key order, as the engine path's readBatch reads them.
 */
export async function runPushdownBatch(tx: Executor, batch: PushdownBatch): Promise<PushdownOutcome> {
  const { plan } = batch;
  const fields = new Set<ParticipantFieldName>(batch.fields ?? []);
  fields.add("flags");
  const columns = batchColumns(batch.fields ? fields : undefined);
  // every step carries the row's columns under their table names, its first state and the rule bits so far
  const ruleBits = plan.rules.map((_, i) => `r${i}`);
  const upper = batch.upTo === null ? sql`` : sql`and participant_id <= ${batch.upTo}`;
  const where = batch.where ? sql`and (${batch.where})` : sql``;
  const lock = batch.lock ? sql`for update` : sql``;
  const steps: SQL[] = [
    sql`step0 as materialized (
      select ${sql.raw(columns.join(", "))}, flags as flags_before, study_status as status_before, false as undecided
      from participants
      where study_key = ${batch.studyKey} and participant_id > ${batch.after} ${upper} and ${eligibleForBulk} ${where}
      order by participant_id
      limit ${batch.limit}
      ${lock})`,
  ];
  plan.rules.forEach((rule, i) => {
    const carried = [...columns, "flags_before", "status_before", ...ruleBits.slice(0, i)];
    steps.push(sql`${sql.raw(`step${i + 1}`)} as materialized (${ruleStep(rule, i, carried, `step${i}`)})`);
  });
  const last = sql.raw(`step${plan.rules.length}`);
  const writesStatus = plan.rules.some((rule) => rule.writes.some((write) => write.kind === "set-status"));
  const assignments = [
    sql`flags = s.flags`,
    ...(writesStatus ? [sql`study_status = s.study_status`] : []),
    sql`modified_at = ${batch.nowSeconds}`,
    sql`version = p.version + 1`,
  ];
  const changed = sql`(s.flags <> s.flags_before or s.study_status <> s.status_before)`;
  const write = batch.dryRun
    ? sql``
    : sql`, written as (
        update participants as p set ${sql.join(assignments, sql`, `)}
        from ${last} as s
        where p.id = s.id and p.version = s.version and ${changed}
          and not exists (select 1 from ${last} where undecided)
        returning p.study_status)`;
  const written = batch.dryRun
    ? sql`0 as written, 0 as left_eligible`
    : sql`(select count(*) from written)::int as written,
        (select count(*) from written where not (${eligibleForBulk}))::int as left_eligible`;
  const perRule = ruleBits.map((bit) => sql.raw(`count(*) filter (where ${bit})::int as ${bit}`));
  const [row] = await executePrepared<Record<string, unknown>>(
    tx,
    sql`
    with ${sql.join(steps, sql`, `)} ${write}
    select count(*)::int as read, max(s.participant_id) as last, coalesce(bool_or(s.undecided), false) as undecided,
      count(*) filter (where ${changed})::int as changed, ${written}
      ${perRule.length > 0 ? sql`, ${sql.join(perRule, sql`, `)}` : sql``}
    from ${last} as s`,
  );
  const result = row ?? {};
  return {
    undecided: result.undecided === true,
    read: Number(result.read ?? 0),
    last: (result.last as string | null | undefined) ?? null,
    changedPerRule: ruleBits.map((bit) => Number(result[bit] ?? 0)),
    changed: Number(result.changed ?? 0),
    written: Number(result.written ?? 0),
    leftEligible: Number(result.left_eligible ?? 0),
  };
}
