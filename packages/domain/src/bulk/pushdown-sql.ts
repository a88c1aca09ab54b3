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
 * by the next CTE, which also remembers the state its own rule starts from.
 */
function ruleChain(plan: BulkWritePlan, columns: readonly string[], written: readonly WrittenColumn[]) {
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
        const kept = [...base, ...bits];
        const extra = [...pendingBit(), ...written.map((column) => sql.raw(`${column} as ${column}_rule`))];
        next(stepSql(step, kept, written, extra, from));
      } else {
        next(stepSql(step, [...base, ...bits, ...ruleStart], written, [], from));
      }
    });
    if (rule.steps.length > 0) pending = index;
  });
  if (pending !== null) {
    const [bit] = pendingBit();
    next(sql`select *, ${bit as SQL} from ${sql.raw(from)}`);
  }
  return { ctes, last: from, bits: new Set(bits) };
}

/**
 * Runs a batch of the plan: the next `limit` eligible participants after `after` (up to `upTo`)
 * that `where` selects, in key order, as the engine path's readBatch reads them.
 */
export async function runPushdownBatch(tx: Executor, batch: PushdownBatch): Promise<PushdownOutcome> {
  const { plan } = batch;
  const writes = plan.rules.flatMap((rule) => rule.steps.flatMap((step) => step.writes));
  // the columns the plan can change, in table order (flags and the status always: never none)
  const writable = WRITABLE.filter(
    ({ column }) => column !== "assigned_surveys" || writes.some((write) => COLUMN_OF[write.kind] === column),
  );
  const writtenColumns = writable.map(({ column }) => column);
  const fields = new Set<ParticipantFieldName>(batch.fields ?? []);
  for (const { field } of writable) fields.add(field);
  const columns = batchColumns(batch.fields ? fields : undefined);
  const upper = batch.upTo === null ? sql`` : sql`and participant_id <= ${batch.upTo}`;
  const where = batch.where ? sql`and (${batch.where})` : sql``;
  const lock = batch.lock ? sql`for update` : sql``;
  const chain = ruleChain(plan, columns, writtenColumns);
  const before = writtenColumns.map((column) => `${column} as ${column}_before`).join(", ");
  const steps: SQL[] = [
    sql`step0 as materialized (
      select ${sql.raw(columns.join(", "))}, ${sql.raw(before)}, false as undecided
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
  const assignments = [
    ...writtenColumns
      .filter((column) => writes.some((write) => COLUMN_OF[write.kind] === column))
      .map((column) => sql.raw(`${column} = s.${column}`)),
    sql`modified_at = ${batch.nowSeconds}`,
    sql`version = p.version + 1`,
  ];
  const changed = sql.raw(`(${writtenColumns.map((column) => `s.${column} <> s.${column}_before`).join(" or ")})`);
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
