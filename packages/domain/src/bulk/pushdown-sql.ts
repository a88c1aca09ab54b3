// A batch of a bulk run made in the database: the engine's BulkWritePlan (rules that write flags,
// the study status and assigned surveys with batch-constant values, under translatable conditions)
// rendered as one statement that selects the batch, runs the rules on each row in order, writes
// the rows that changed and counts what changed per rule. Nothing crosses the wire but counts.
//
// The statement is a chain of materialized steps, each a row per participant of the batch: the
// state a step of a rule leaves (flags, study_status, assigned_surveys), whether the translation could not tell its
// condition (see the engine's bulk-writes.ts), and per rule whether it changed the row. A step
// renders its condition with the prefilter's renderer over the previous step's columns, which carry
// the participants table's names; materializing each step keeps it evaluated once per row.
//
// The write is guarded as the engine path's is: by the version each row was read with, so a row an
// API request changed meanwhile is left alone, and fewer rows written than changed means a lost
// race (the caller rolls back and runs the batch again under row locks). When some row cannot be
// told, nothing is written and the caller evaluates the batch in the engine.
//
// The commonest plan, one step whose condition is told for every row (a flag set for everyone, or
// for those with some flag), needs none of this: it is one UPDATE over the batch's rows, which
// evaluates each row's condition and new values on the row it writes (see runSingleStep).
import { sql, type SQL } from "drizzle-orm";
import type { BulkWritePlan, StateWrite, WriteStep } from "@studyflow/engine";
import { executePrepared, type Executor, type ParticipantFieldName } from "@studyflow/db";
import { batchColumns, eligibleForBulk, type BatchRange } from "./participant-batch";
import { renderPrefilter } from "./prefilter-sql";

/** A batch for the database; its `limit` counts the eligible participants it covers, selected or not. */
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
  /** Eligible participants in the batch's range (at most `limit`): the participants it processed. */
  size: number;
  /** The last participant id of the range; null when the range is empty. */
  last: string | null;
  changedPerRule: number[];
  /** Rows whose state the rules changed. */
  changed: number;
  /** Rows written: `changed` unless a concurrent writer got there first (or a dry run). */
  written: number;
}

/** The columns a plan can write, each with the field it stores. */
const WRITABLE = [
  { column: "flags", field: "flags" },
  { column: "study_status", field: "studyStatus" },
  { column: "assigned_surveys", field: "assignedSurveys" },
] as const satisfies readonly { column: string; field: ParticipantFieldName }[];
type WrittenColumn = (typeof WRITABLE)[number]["column"];

const COLUMN_OF: Record<StateWrite["kind"], WrittenColumn> = {
  "set-flag": "flags",
  "remove-flag": "flags",
  "set-status": "study_status",
  "add-survey": "assigned_surveys",
  "remove-surveys": "assigned_surveys",
};

/**
 * A step's writes as the new value of each column they touch, an expression over the step's input
 * row. Flag writes are reduced to their net effect (the last write of a key wins, so the order of
 * keys does not matter); the status is the last one set; survey writes apply in order, an append
 * before a removal by its key being removed with the others.
 */
function newValues(writes: readonly StateWrite[]): Map<WrittenColumn, SQL> {
  const flags = new Map<string, string | null>();
  let status: string | undefined;
  let surveys: SQL | undefined;
  for (const write of writes) {
    switch (write.kind) {
      case "set-flag":
        flags.set(write.key, write.value);
        break;
      case "remove-flag":
        flags.set(write.key, null);
        break;
      case "set-status":
        status = write.status;
        break;
      case "add-survey":
        surveys = sql`(${surveys ?? sql`assigned_surveys`} || ${JSON.stringify([write.survey])}::jsonb)`;
        break;
      case "remove-surveys":
        // every element but those whose surveyKey is the key, in order (a JSON comparison: a key
        // stored as another type is kept, as the engine keeps it)
        surveys =
          write.surveyKey === undefined
            ? sql`'[]'::jsonb`
            : sql`coalesce((select jsonb_agg(e order by i) from jsonb_array_elements(${surveys ?? sql`assigned_surveys`})
                with ordinality as t(e, i) where (e -> 'surveyKey') is distinct from to_jsonb(${write.surveyKey}::text)), '[]'::jsonb)`;
        break;
    }
  }
  const values = new Map<WrittenColumn, SQL>();
  if (flags.size > 0) {
    const set: Record<string, string> = {};
    let value = sql`flags`;
    for (const [key, flag] of flags) {
      if (flag === null) value = sql`(${value} - ${key}::text)`;
      else Object.defineProperty(set, key, { value: flag, enumerable: true, writable: true, configurable: true });
    }
    if (Object.keys(set).length > 0) value = sql`(${value} || ${JSON.stringify(set)}::jsonb)`;
    values.set("flags", value);
  }
  if (status !== undefined) values.set("study_status", sql`${status}::text`);
  if (surveys) values.set("assigned_surveys", surveys);
  return values;
}

/** Whether any written column differs from its copy named `<column>_<suffix>`. */
const differsFrom = (columns: readonly WrittenColumn[], suffix: string) =>
  sql.raw(`(${columns.map((column) => `${column} <> ${column}_${suffix}`).join(" or ")})`);

/**
 * One step over the previous one: its condition's two predicates computed once per row (the
 * `offset 0` keeps the planner from copying them into every use), then its writes where the
 * condition surely holds. `extra` are columns the step adds, computed from its input row.
 */
function stepSql(
  step: WriteStep,
  kept: readonly string[],
  written: readonly WrittenColumn[],
  extra: readonly SQL[],
  from: string,
): SQL {
  const values = newValues(step.writes);
  const outputs = written.map((column) => {
    const value = values.get(column);
    return value
      ? sql`case when sure then ${value} else ${sql.raw(column)} end as ${sql.raw(column)}`
      : sql.raw(column);
  });
  return sql`
    select ${sql.join([...kept.map((column) => sql.raw(column)), ...extra, ...outputs], sql`, `)},
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
 * by the next CTE, which also remembers the state its own rule starts from; the last rule's bit is
 * an expression over the last CTE, for the statement's final count (one materialized step less).
 */
function ruleChain(plan: BulkWritePlan, columns: readonly string[], written: readonly WrittenColumn[]) {
  const ctes: SQL[] = [];
  let from = "step0";
  /** Per rule with steps: its bit, a column of the last CTE or an expression over it. */
  const bits = new Map<number, SQL>();
  /** The bit columns computed so far, carried by every later step. */
  let bitColumns: string[] = [];
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
    bits.set(pending, sql.raw(bit));
    bitColumns = [...bitColumns, bit];
    pending = null;
    return [sql`${differsFrom(written, "rule")} as ${sql.raw(bit)}`];
  };
  const base = [
    ...columns.filter((column) => !(written as readonly string[]).includes(column)),
    ...written.map((column) => `${column}_before`),
  ];
  const ruleStart = written.map((column) => `${column}_rule`);
  plan.rules.forEach((rule, index) => {
    rule.steps.forEach((step, stepIndex) => {
      if (stepIndex === 0) {
        // the bits so far are kept; the previous rule's is computed here
        const kept = [...base, ...bitColumns];
        const extra = [...pendingBit(), ...written.map((column) => sql.raw(`${column} as ${column}_rule`))];
        next(stepSql(step, kept, written, extra, from));
      } else {
        next(stepSql(step, [...base, ...bitColumns, ...ruleStart], written, [], from));
      }
    });
    if (rule.steps.length > 0) pending = index;
  });
  if (pending !== null) bits.set(pending, differsFrom(written, "rule"));
  return { ctes, last: from, bits };
}

/** Whether two predicates are the same (plain data, compared member by member). */
function samePredicate(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => samePredicate((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

/**
 * A step whose condition the translation tells for every row: where `holds` is false `otherwise`
 * is true and the other way round (unconditional, or a condition and its negation), so no row is
 * left undecided.
 */
function decidedEverywhere(step: WriteStep): boolean {
  const { holds, otherwise } = step;
  if (holds.kind === "const" && otherwise.kind === "const") return holds.value !== otherwise.value;
  return (
    (otherwise.kind === "not" && samePredicate(otherwise.item, holds)) ||
    (holds.kind === "not" && samePredicate(holds.item, otherwise))
  );
}

/**
 * The plan's only step and the rule it belongs to, when the plan has one step in all and its
 * condition is decided for every row: such a batch can be one UPDATE over its range.
 */
export function singleDecidedStep(plan: BulkWritePlan): { rule: number; step: WriteStep } | null {
  const withSteps = plan.rules.flatMap((rule, index) => (rule.steps.length > 0 ? [index] : []));
  if (withSteps.length !== 1) return null;
  const rule = withSteps[0] as number;
  const steps = plan.rules[rule]?.steps ?? [];
  const step = steps[0];
  return steps.length === 1 && step && decidedEverywhere(step) ? { rule, step } : null;
}

/**
 * Runs a batch of the plan over the next `limit` eligible participants after `after` (up to
 * `upTo`): the range is found from participants_bulk_eligible_idx alone, which also counts it, and
 * only the rows of the range that `where` selects are read, evaluated and written, in one
 * statement. Every part of the statement sees one snapshot, so the count is of the range as the
 * batch saw it, rows it takes out of bulk runs included.
 *
 * A plan of one step whose condition is decided for every row is one UPDATE over the range, as a
 * hand-written statement would be: each row's condition and new values are evaluated on the row
 * it writes, and a row another writer changes meanwhile is evaluated again on that writer's
 * version once it commits (PostgreSQL's recheck of an updated row), so neither change is lost and
 * no retry is needed. Every other plan runs as the chain of steps above, whose rows are read
 * first: they are written through the physical position the read found them at (a TID scan, no
 * index lookup per row), guarded by their version, so a row another writer changed since is at
 * another position or has another version, is not written, and the caller sees written < changed.
 * The locked retry writes by id: its rows may have been changed and locked after the snapshot.
 */
export async function runPushdownBatch(tx: Executor, batch: PushdownBatch): Promise<PushdownOutcome> {
  const upper = batch.upTo === null ? sql`` : sql`and participant_id <= ${batch.upTo}`;
  const inRange = sql`study_key = ${batch.studyKey} and participant_id > ${batch.after} ${upper} and ${eligibleForBulk}`;
  // The batch's range and its size, from the index alone, in one pass over its keys: the last key
  // is the largest of them (max compares as the index orders, by the column's collation). Counting
  // first and then stepping to the limit again read a full batch's keys twice (10,000 keys, warm:
  // 5.9 against 3.0 ms).
  const range = sql`batch_range as materialized (
      select count(*)::int as size, max(participant_id) as last from (
        select participant_id from participants where ${inRange} order by participant_id limit ${batch.limit}) as keys)`;
  const rows = sql`study_key = ${batch.studyKey} and participant_id > ${batch.after}
        and participant_id <= (select last from batch_range) and ${eligibleForBulk}
        ${batch.where ? sql`and (${batch.where})` : sql``}`;
  const single = !batch.lock && !batch.dryRun ? singleDecidedStep(batch.plan) : null;
  return single ? runSingleStep(tx, batch, range, rows, single) : runChain(tx, batch, range, rows);
}

/** One step decided for every row, as one UPDATE over the batch's rows. */
async function runSingleStep(
  tx: Executor,
  batch: PushdownBatch,
  range: SQL,
  rows: SQL,
  single: { rule: number; step: WriteStep },
): Promise<PushdownOutcome> {
  const values = [...newValues(single.step.writes)];
  const assignments = [
    ...values.map(([column, value]) => sql`${sql.raw(column)} = ${value}`),
    sql`modified_at = ${batch.nowSeconds}`,
    sql`version = version + 1`,
  ];
  const changes = sql.join(
    values.map(([column, value]) => sql`${value} <> ${sql.raw(column)}`),
    sql` or `,
  );
  const [row] = await executePrepared<Record<string, unknown>>(
    tx,
    sql`
    with ${range}, written as (
      update participants set ${sql.join(assignments, sql`, `)}
      where ${rows} and ${renderPrefilter(single.step.holds)} and (${changes})
      returning 1)
    select (select size from batch_range) as size, (select last from batch_range) as last,
      (select count(*) from written)::int as written`,
  );
  const written = Number(row?.written ?? 0);
  return {
    undecided: false,
    size: Number(row?.size ?? 0),
    last: (row?.last as string | null | undefined) ?? null,
    changedPerRule: batch.plan.rules.map((_, i) => (i === single.rule ? written : 0)),
    changed: written,
    written,
  };
}

/** Any plan, as the chain of steps over the batch's rows read first (see ruleChain). */
async function runChain(tx: Executor, batch: PushdownBatch, range: SQL, rows: SQL): Promise<PushdownOutcome> {
  const { plan } = batch;
  const writes = plan.rules.flatMap((rule) => rule.steps.flatMap((step) => step.writes));
  // the columns the plan can change, in table order (flags and the status always: never none)
  const writable = WRITABLE.filter(
    ({ column }) => column !== "assigned_surveys" || writes.some((write) => COLUMN_OF[write.kind] === column),
  );
  const writtenColumns = writable.map(({ column }) => column);
  const fields = new Set<ParticipantFieldName>(batch.fields ?? []);
  for (const { field } of writable) fields.add(field);
  // the unlocked batch carries each row's position to its write
  const byPosition = !batch.lock && !batch.dryRun;
  const columns = [...(byPosition ? ["row_ctid"] : []), ...batchColumns(batch.fields ? fields : undefined)];
  const readColumns = columns.map((column) => (column === "row_ctid" ? "ctid as row_ctid" : column));
  const lock = batch.lock ? sql`for update` : sql``;
  const chain = ruleChain(plan, columns, writtenColumns);
  const before = writtenColumns.map((column) => `${column} as ${column}_before`).join(", ");
  // step0 feeds the first step alone, which reads it once: it is not stored on its own (the
  // locked read is, so that its rows are locked before any step runs)
  const step0 = chain.ctes.length > 0 && !batch.lock ? sql`not materialized` : sql`materialized`;
  const steps: SQL[] = [
    range,
    sql`step0 as ${step0} (
      select ${sql.raw(readColumns.join(", "))}, ${sql.raw(before)}, false as undecided
      from participants
      where ${rows}
      ${lock})`,
    ...chain.ctes,
  ];
  // a rule without steps never changes a row
  const ruleBits = plan.rules.map((_, i) => chain.bits.get(i) ?? null);
  const last = sql.raw(chain.last);
  const assignments = [
    ...writtenColumns
      .filter((column) => writes.some((write) => COLUMN_OF[write.kind] === column))
      .map((column) => sql.raw(`${column} = s.${column}`)),
    sql`modified_at = ${batch.nowSeconds}`,
    sql`version = p.version + 1`,
  ];
  const changed = sql.raw(`(${writtenColumns.map((column) => `s.${column} <> s.${column}_before`).join(" or ")})`);
  const position = byPosition ? sql`p.ctid = s.row_ctid and` : sql``;
  const write = batch.dryRun
    ? sql``
    : sql`, written as (
        update participants as p set ${sql.join(assignments, sql`, `)}
        from ${last} as s
        where ${position} p.id = s.id and p.version = s.version and ${changed}
          and not exists (select 1 from ${last} where undecided)
        returning 1)`;
  const written = batch.dryRun ? sql`0 as written` : sql`(select count(*) from written)::int as written`;
  const perRule = ruleBits.flatMap((bit, i) =>
    bit ? [sql`count(*) filter (where ${bit})::int as ${sql.raw(`r${i}`)}`] : [],
  );
  const [row] = await executePrepared<Record<string, unknown>>(
    tx,
    sql`
    with ${sql.join(steps, sql`, `)} ${write}
    select (select size from batch_range) as size, (select last from batch_range) as last,
      coalesce(bool_or(s.undecided), false) as undecided,
      count(*) filter (where ${changed})::int as changed, ${written}
      ${perRule.length > 0 ? sql`, ${sql.join(perRule, sql`, `)}` : sql``}
    from ${last} as s`,
  );
  const result = row ?? {};
  return {
    undecided: result.undecided === true,
    size: Number(result.size ?? 0),
    last: (result.last as string | null | undefined) ?? null,
    changedPerRule: ruleBits.map((bit, i) => (bit ? Number(result[`r${i}`] ?? 0) : 0)),
    changed: Number(result.changed ?? 0),
    written: Number(result.written ?? 0),
  };
}
