// A batch of a bulk run made in the database: the engine's BulkWritePlan (rules that set or remove
// flags and set the study status with batch-constant values, under translatable conditions)
// rendered as one statement that selects the batch, runs the rules on each row in order, writes
// the rows that changed and counts what changed per rule. Nothing crosses the wire but counts.
//
// The statement is a chain of materialized steps, each a row per participant of the batch: the
// state a step of a rule leaves (flags, study_status), whether the translation could not tell its
// condition (see the engine's bulk-writes.ts), and per rule whether it changed the row. A step
// renders its condition with the prefilter's renderer over the previous step's columns, which carry
// the participants table's names; materializing each step keeps it evaluated once per row.
//
// The write is guarded as the engine path's is: by the version each row was read with, so a row an
// API request changed meanwhile is left alone, and fewer rows written than changed means a lost
// race (the caller rolls back and runs the batch again under row locks). When some row cannot be
// told, nothing is written and the caller evaluates the batch in the engine.
import { sql, type SQL } from "drizzle-orm";
import type { BulkWritePlan, StateWrite, WriteStep } from "@studyflow/engine";
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

/** A step's writes reduced to their net effect: the last write of each key and of the status wins. */
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

/** Whether the row's state differs from the one it had at `flagsColumn` / `statusColumn`. */
const differsFrom = (flagsColumn: string, statusColumn: string) =>
  sql.raw(`(flags <> ${flagsColumn} or study_status <> ${statusColumn})`);

/**
 * One step over the previous one: its condition's two predicates computed once per row (the
 * `offset 0` keeps the planner from copying them into every use), then its writes where the
 * condition surely holds. `extra` are columns the step adds, computed from its input row.
 */
function stepSql(step: WriteStep, kept: readonly string[], extra: readonly SQL[], from: string): SQL {
  const { set, removed, status } = netWrites(step.writes);
  let flags = sql`flags`;
  for (const key of removed) flags = sql`(${flags} - ${key}::text)`;
  if (Object.keys(set).length > 0) flags = sql`(${flags} || ${JSON.stringify(set)}::jsonb)`;
  const newStatus =
    status === undefined ? sql`study_status` : sql`case when sure then ${status}::text else study_status end`;
  return sql`
    select ${sql.raw(kept.join(", "))}, ${sql.join([...extra, sql``], sql`, `)}
      case when sure then ${flags} else flags end as flags,
      ${newStatus} as study_status,
      undecided or (holds and not sure) as undecided
    from (
      select *, holds and not otherwise as sure
      from (select *, ${renderPrefilter(step.holds)} as holds, ${renderPrefilter(step.otherwise)} as otherwise
            from ${sql.raw(from)} offset 0) as conditions
      offset 0
    ) as step`;
}

/**
 * The chain of steps after `step0`: every rule's steps in order. A rule's bit (did it change the
 * row) compares the state after its last step with the state before its first, so it is computed
 * by the next CTE, which also remembers the state its own rule starts from.
 */
function ruleChain(plan: BulkWritePlan, columns: readonly string[]) {
  const ctes: SQL[] = [];
  let from = "step0";
  let bits: string[] = [];
  /** The rule whose bit the next CTE computes. */
  let pending: number | null = null;
  const next = (body: SQL) => {
    const name = `step${ctes.length + 1}`;
    ctes.push(sql`${sql.raw(name)} as materialized (${body})`);
    from = name;
  };
  const pendingBit = (): SQL[] => {
    if (pending === null) return [];
    const bit = `r${pending}`;
    bits = [...bits, bit];
    pending = null;
    return [sql`${differsFrom("rule_flags", "rule_status")} as ${sql.raw(bit)}`];
  };
  plan.rules.forEach((rule, index) => {
    rule.steps.forEach((step, stepIndex) => {
      const base = [...columns.filter((c) => c !== "flags" && c !== "study_status"), "flags_before", "status_before"];
      const carriedBits = [...bits];
      if (stepIndex === 0) {
        const extra = [...pendingBit(), sql`flags as rule_flags`, sql`study_status as rule_status`];
        next(stepSql(step, [...base, ...carriedBits], extra, from));
      } else {
        next(stepSql(step, [...base, ...carriedBits, "rule_flags", "rule_status"], [], from));
      }
    });
    if (rule.steps.length > 0) pending = index;
  });
  if (pending !== null) {
    const extra = pendingBit();
    next(sql`select *, ${extra[0] as SQL} from ${sql.raw(from)}`);
  }
  return { ctes, last: from, bits: new Set(bits) };
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
  const upper = batch.upTo === null ? sql`` : sql`and participant_id <= ${batch.upTo}`;
  const where = batch.where ? sql`and (${batch.where})` : sql``;
  const lock = batch.lock ? sql`for update` : sql``;
  const chain = ruleChain(plan, columns);
  const steps: SQL[] = [
    sql`step0 as materialized (
      select ${sql.raw(columns.join(", "))}, flags as flags_before, study_status as status_before, false as undecided
      from participants
      where study_key = ${batch.studyKey} and participant_id > ${batch.after} ${upper} and ${eligibleForBulk} ${where}
      order by participant_id
      limit ${batch.limit}
      ${lock})`,
    ...chain.ctes,
  ];
  // a rule without steps never changes a row
  const ruleBits = plan.rules.map((_, i) => (chain.bits.has(`r${i}`) ? `r${i}` : null));
  const last = sql.raw(chain.last);
  const writesStatus = plan.rules.some((rule) =>
    rule.steps.some((step) => step.writes.some((write) => write.kind === "set-status")),
  );
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
  const perRule = ruleBits.flatMap((bit) => (bit ? [sql.raw(`count(*) filter (where ${bit})::int as ${bit}`)] : []));
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
    changedPerRule: ruleBits.map((bit) => (bit ? Number(result[bit] ?? 0) : 0)),
    changed: Number(result.changed ?? 0),
    written: Number(result.written ?? 0),
    leftEligible: Number(result.left_eligible ?? 0),
  };
}
