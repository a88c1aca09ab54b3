import { sql, type SQL } from "drizzle-orm";
import type { Executor } from "@studyflow/db";
import type { CaseFilterTarget } from "../case-filter/fields";
import type { OrderColumn } from "./paged-read";

/**
 * Totals and deep pages of the explorer's commonest queries from kept counts instead of counting
 * and skipping rows: a study's participants per status and ten minutes of entry
 * (participant_entry_buckets), its participants per flag value and ten minutes of entry
 * (participant_flag_buckets) and a survey's responses per hour of arrival and per hour of
 * submission (response_arrival_buckets), all per day too, kept exact by triggers in the writing
 * transaction (migrations 0026, 0028 and 0029). Below, a "slice" is the short bucket: ten minutes
 * or an hour.
 *
 * The queries served are those case-admin sends: participants by status (`studyStatus` equal to,
 * in, not equal to or not in), entry time bounds (`enteredAt` $gt/$gte/$lt/$lte/$eq), both or
 * neither; participants with one flag equal to a string (`flags.X`), with or without entry time
 * bounds, while the flag's key is kept (at most 64 values, see explorer_unkept_flag_keys); one
 * survey's responses with `arrivedAt` bounds or none (without bounds, in submission order too:
 * the API's default). Their total is the sum of the
 * day rows inside the bounds, plus the slices inside the days the bounds cut, plus an index count
 * of at most two slices the bounds cut. A page in entry (arrival) order starts in the slice found
 * by summing days, then slices, up to the page's offset; only the rest of that slice is skipped on
 * the index. Rows with equal times are in one slice, so the tie-break order inside it is the index's.
 */

const DAY = 86_400;
/** The short bucket's length: participants enter in bursts (a study's launch), responses arrive spread out. */
const SLICE_SECONDS = { participants: 600, responses: 3_600 } as const;

/** Inclusive bounds on the kept time; null is unbounded. */
interface Bounds {
  lo: number | null;
  hi: number | null;
}

interface StatusSet {
  /** Only these statuses (null: any). */
  include: string[] | null;
  /** None of these. */
  exclude: string[];
}

/** A flag entry equal to a string. */
interface FlagEquals {
  key: string;
  value: string;
}

export type KeptShape =
  | { target: "participants"; statuses: StatusSet; flag: FlagEquals | null; bounds: Bounds }
  | {
      target: "responses";
      surveyKey: string;
      bounds: Bounds;
      /**
       * The time the counts are read by: arrival, or submission for a survey's responses in
       * submission order (the API's default) without bounds (submission counts place its pages).
       */
      by: "arrival" | "submission";
    };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The filter as a list of (field, condition) that must all hold, or null when it has an $or or anything else. */
function conjuncts(filter: unknown): [string, unknown][] | null {
  if (filter === undefined || filter === null) return [];
  if (!isPlainObject(filter)) return null;
  const out: [string, unknown][] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and") {
      if (!Array.isArray(value)) return null;
      for (const branch of value) {
        const inner = conjuncts(branch);
        if (!inner) return null;
        out.push(...inner);
      }
    } else if (key.startsWith("$")) {
      return null;
    } else {
      out.push([key, value]);
    }
  }
  return out;
}

/** A condition's operator-operand pairs: `{"$gte": 5}` as is, a bare value as `$eq`. */
function operations(condition: unknown): [string, unknown][] {
  if (isPlainObject(condition) && Object.keys(condition).some((key) => key.startsWith("$"))) {
    return Object.entries(condition);
  }
  return [["$eq", condition]];
}

/** Narrows `bounds` by a time condition; false when the condition is not a bound (kept counts cannot answer it). */
function narrowBounds(bounds: Bounds, condition: unknown): boolean {
  for (const [operator, operand] of operations(condition)) {
    if (typeof operand !== "number" || !Number.isSafeInteger(operand)) return false;
    const lo = (value: number) => (bounds.lo = bounds.lo === null ? value : Math.max(bounds.lo, value));
    const hi = (value: number) => (bounds.hi = bounds.hi === null ? value : Math.min(bounds.hi, value));
    switch (operator) {
      case "$eq":
        lo(operand);
        hi(operand);
        break;
      case "$gt":
        lo(operand + 1);
        break;
      case "$gte":
        lo(operand);
        break;
      case "$lt":
        hi(operand - 1);
        break;
      case "$lte":
        hi(operand);
        break;
      default:
        return false;
    }
  }
  return true;
}

const stringList = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((item) => typeof item === "string") ? value : null;

function narrowStatuses(statuses: StatusSet, condition: unknown): boolean {
  for (const [operator, operand] of operations(condition)) {
    const list =
      operator === "$eq" || operator === "$ne" ? (typeof operand === "string" ? [operand] : null) : stringList(operand);
    if (!list) return false;
    if (operator === "$eq" || operator === "$in") {
      statuses.include = statuses.include === null ? [...list] : statuses.include.filter((s) => list.includes(s));
    } else if (operator === "$ne" || operator === "$nin") {
      statuses.exclude.push(...list);
    } else {
      return false;
    }
  }
  return true;
}

/**
 * The query as kept counts answer it, or null. The filter must have passed translateCaseFilter
 * (so its values have their field's type); anything but the conditions named above is null.
 * `order`, when given, picks the time a survey's unbounded responses are counted by.
 */
export function keptShape(target: CaseFilterTarget, filter: unknown, order?: readonly OrderColumn[]): KeptShape | null {
  const conditions = conjuncts(filter);
  if (!conditions) return null;
  const bounds: Bounds = { lo: null, hi: null };
  if (target === "participants") {
    const statuses: StatusSet = { include: null, exclude: [] };
    let flag: FlagEquals | null = null;
    for (const [field, condition] of conditions) {
      if (field === "studyStatus") {
        if (!narrowStatuses(statuses, condition)) return null;
      } else if (field === "enteredAt") {
        if (!narrowBounds(bounds, condition)) return null;
      } else if (field.startsWith("flags.")) {
        const ops = operations(condition);
        const [operator, operand] = ops[0] ?? [];
        if (ops.length !== 1 || operator !== "$eq" || typeof operand !== "string") return null;
        const key = field.slice("flags.".length);
        // a second flag condition, or flag counts (kept for every status) with a status condition
        if (flag !== null && (flag.key !== key || flag.value !== operand)) return null;
        flag = { key, value: operand };
      } else {
        return null;
      }
    }
    if (flag !== null && (statuses.include !== null || statuses.exclude.length > 0)) return null;
    return { target, statuses, flag, bounds };
  }
  if (target === "responses") {
    let surveyKey: string | null = null;
    for (const [field, condition] of conditions) {
      if (field === "key") {
        const ops = operations(condition);
        const [operator, operand] = ops[0] ?? [];
        if (ops.length !== 1 || operator !== "$eq" || typeof operand !== "string") return null;
        if (surveyKey !== null && surveyKey !== operand) return null;
        surveyKey = operand;
      } else if (field === "arrivedAt") {
        if (!narrowBounds(bounds, condition)) return null;
      } else {
        return null;
      }
    }
    if (surveyKey === null) return null;
    const bySubmission = bounds.lo === null && bounds.hi === null && order?.[0]?.column === "submitted_at";
    return { target, surveyKey, bounds, by: bySubmission ? "submission" : "arrival" };
  }
  return null;
}

/** The time column the shape's counts are kept on. */
const timeColumn = (shape: KeptShape) =>
  shape.target === "participants" ? "entered_at" : shape.by === "submission" ? "submitted_at" : "arrived_at";

/** The bucket table's column of the shape's counts. */
const countColumn = (shape: KeptShape) =>
  sql.raw(shape.target === "responses" && shape.by === "submission" ? "submitted" : "count");

/**
 * Whether kept counts place pages of `order`: the kept time then the table's unique column, both
 * one way (so one index range serves the page from any slice on).
 */
export function keptOrderServes(shape: KeptShape, order: readonly OrderColumn[]): boolean {
  return (
    order.length === 2 &&
    order[0]!.column === timeColumn(shape) &&
    order[1]!.column === (shape.target === "participants" ? "participant_id" : "id") &&
    order[0]!.direction === order[1]!.direction
  );
}

const list = (values: readonly string[]) =>
  sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  );

/** The shape's study, status or survey as conditions on the bucket table (buckets) or the rows' table. */
function partOf(studyKey: string, shape: KeptShape, on: "buckets" | "rows"): SQL {
  if (shape.target === "responses") {
    return on === "buckets"
      ? sql`study_key = ${studyKey} and survey_key = ${shape.surveyKey}`
      : sql`study_key = ${studyKey} and key = ${shape.surveyKey}`;
  }
  const parts = [sql`study_key = ${studyKey}`];
  if (shape.flag) {
    // as translateCaseFilter reads a flag, the row's side; the counts' side as the triggers keep it
    parts.push(
      on === "buckets"
        ? sql`flag_key = ${shape.flag.key} and flag_value = ${shape.flag.value}`
        : sql`(flags ->> ${shape.flag.key}::text) = ${shape.flag.value}::text`,
    );
  }
  const { include, exclude } = shape.statuses;
  if (include !== null) parts.push(include.length === 0 ? sql`false` : sql`study_status in (${list(include)})`);
  if (exclude.length > 0) parts.push(sql`study_status not in (${list(exclude)})`);
  return sql.join(parts, sql` and `);
}

const bucketTable = (shape: KeptShape) =>
  sql.raw(
    shape.target === "responses"
      ? "response_arrival_buckets"
      : shape.flag
        ? "participant_flag_buckets"
        : "participant_entry_buckets",
  );
const rowTable = (shape: KeptShape) => sql.raw(shape.target === "participants" ? "participants" : "survey_responses");

/** floor(at / width), as the triggers compute it (`explorer_bucket`). */
const bucketOf = (at: number, width: number) => Math.floor(at / width);

/** Rows of the shape with the time in [from, to] (inclusive), counted on the index. */
const countBetween = (studyKey: string, shape: KeptShape, from: number, to: number) =>
  sql`(select count(*) from ${rowTable(shape)} where ${partOf(studyKey, shape, "rows")}
       and ${sql.raw(timeColumn(shape))} between ${from}::bigint and ${to}::bigint)`;

/** The kept slices and days the bounds need, with the slices they cut counted exactly. */
interface Summary {
  /** Day → rows of the shape that day, within the bounds. */
  days: Map<number, number>;
  /** Slice → rows within the bounds, for the slices of the days the bounds cut. */
  edgeSlices: Map<number, number>;
  /** The days the bounds cut (their counts come from edgeSlices). */
  edgeDays: Set<number>;
  total: number;
}

interface Span {
  /** Length of a slice in seconds, and slices per day. */
  width: number;
  perDay: number;
  /** First and last slice inside the bounds (null: unbounded). */
  first: number | null;
  last: number | null;
  /** The slices the bounds cut, with [from, to] to count exactly. */
  cutSlices: { slice: number; from: number; to: number }[];
  /** The days the bounds cut. */
  cutDays: number[];
}

function spanOf(shape: KeptShape): Span {
  const width = SLICE_SECONDS[shape.target];
  const cutSlices: Span["cutSlices"] = [];
  const cutDays: number[] = [];
  const { lo, hi } = shape.bounds;
  const first = lo === null ? null : bucketOf(lo, width);
  const last = hi === null ? null : bucketOf(hi, width);
  const loCut = lo !== null && lo !== first! * width;
  const hiCut = hi !== null && hi !== last! * width + width - 1;
  if (first !== null && first === last) {
    if (loCut || hiCut) cutSlices.push({ slice: first, from: lo!, to: hi! });
  } else {
    if (loCut) cutSlices.push({ slice: first!, from: lo, to: first! * width + width - 1 });
    if (hiCut) cutSlices.push({ slice: last!, from: last! * width, to: hi });
  }
  if (lo !== null && lo !== bucketOf(lo, DAY) * DAY) cutDays.push(bucketOf(lo, DAY));
  if (hi !== null && hi !== bucketOf(hi, DAY) * DAY + DAY - 1 && !cutDays.includes(bucketOf(hi, DAY))) {
    cutDays.push(bucketOf(hi, DAY));
  }
  return { width, perDay: DAY / width, first, last, cutSlices, cutDays };
}

const inSpan = (span: Span, slice: number) =>
  (span.first === null || slice >= span.first) && (span.last === null || slice <= span.last);

/** Sums of the bucket rows of `width` per bucket, for buckets in the ranges (null: unbounded). */
function bucketSums(studyKey: string, shape: KeptShape, width: number, ranges: [number | null, number | null][]): SQL {
  const within = sql.join(
    ranges.map(([from, to]) => {
      const parts = [sql`true`];
      if (from !== null) parts.push(sql`bucket >= ${from}::bigint`);
      if (to !== null) parts.push(sql`bucket <= ${to}::bigint`);
      return sql`(${sql.join(parts, sql` and `)})`;
    }),
    sql` or `,
  );
  const n = countColumn(shape);
  return sql`select ${width}::int as width, bucket::text as bucket, sum(${n})::text as n
    from ${bucketTable(shape)}
    where ${partOf(studyKey, shape, "buckets")} and width = ${width}::int and (${within})
    group by bucket having sum(${n}) <> 0`;
}

/** The slices of `day`, as bucket ranges of the slice width. */
const slicesOf = (span: Span, day: number): [number, number] => [
  day * span.perDay,
  day * span.perDay + span.perDay - 1,
];

/** The summary, or null when the shape's flag key is not kept (it took too many values). */
async function summarise(db: Executor, studyKey: string, shape: KeptShape, span: Span): Promise<Summary | null> {
  const { lo, hi } = shape.bounds;
  const parts: SQL[] = [
    bucketSums(studyKey, shape, DAY, [
      [lo === null ? null : bucketOf(lo, DAY), hi === null ? null : bucketOf(hi, DAY)],
    ]),
  ];
  if (span.cutDays.length > 0) {
    parts.push(
      bucketSums(
        studyKey,
        shape,
        span.width,
        span.cutDays.map((day) => slicesOf(span, day)),
      ),
    );
  }
  for (const cut of span.cutSlices) {
    parts.push(
      sql`select -1 as width, ${cut.slice}::bigint::text as bucket, ${countBetween(studyKey, shape, cut.from, cut.to)}::text as n`,
    );
  }
  if (shape.target === "participants" && shape.flag) {
    parts.push(
      sql`select -2 as width, '0' as bucket, count(*)::text as n from explorer_unkept_flag_keys
          where study_key = ${studyKey} and flag_key = ${shape.flag.key}`,
    );
  }
  const rows = await db.execute<{ width: number; bucket: string; n: string }>(sql.join(parts, sql` union all `));
  if (rows.some((row) => row.width === -2 && row.n !== "0")) return null;
  const days = new Map<number, number>();
  const slices = new Map<number, number>();
  const cuts = new Map<number, number>();
  for (const row of rows) {
    if (row.width === -2) continue;
    const bucket = Number(row.bucket);
    const n = Number(row.n);
    if (row.width === DAY) days.set(bucket, n);
    else if (row.width === span.width) slices.set(bucket, n);
    else cuts.set(bucket, n);
  }
  const edgeDays = new Set(span.cutDays);
  // the slices of the cut days inside the bounds: a cut slice (always in a cut day) as counted, the others as kept
  const edgeSlices = new Map<number, number>();
  for (const slice of new Set([...slices.keys(), ...cuts.keys()])) {
    if (inSpan(span, slice)) edgeSlices.set(slice, cuts.get(slice) ?? slices.get(slice)!);
  }
  for (const day of edgeDays) {
    let n = 0;
    for (const [slice, count] of edgeSlices) if (bucketOf(slice, span.perDay) === day) n += count;
    days.set(day, n);
  }
  let total = 0;
  for (const [day, n] of days) {
    if (n === 0) days.delete(day);
    else total += n;
  }
  return { days, edgeSlices, edgeDays, total };
}

/** What kept counts tell of a shape: its total, and per day (and per slice of the cut days) where its rows are. */
export interface KeptCounts {
  total: number;
  span: Span;
  summary: Summary;
}

/**
 * The shape's total and where its rows are, from kept counts: one read of at most the days in the
 * bounds. Null when the counts are not kept after all (a flag key with too many values): count.
 */
export async function keptCounts(db: Executor, studyKey: string, shape: KeptShape): Promise<KeptCounts | null> {
  const span = spanOf(shape);
  const { lo, hi } = shape.bounds;
  if (lo !== null && hi !== null && lo > hi) {
    return { total: 0, span, summary: { days: new Map(), edgeSlices: new Map(), edgeDays: new Set(), total: 0 } };
  }
  const summary = await summarise(db, studyKey, shape, span);
  if (!summary) return null;
  return { total: summary.total, span, summary };
}

/** Picks the bucket holding position `offset` (0-based) from `counts`, walked in `direction`. */
function locate(
  counts: Map<number, number>,
  offset: number,
  direction: "asc" | "desc",
): { bucket: number; rest: number } | null {
  const buckets = [...counts.keys()].sort((a, b) => (direction === "asc" ? a - b : b - a));
  let before = 0;
  for (const bucket of buckets) {
    const n = counts.get(bucket)!;
    if (offset < before + n) return { bucket, rest: offset - before };
    before += n;
  }
  return null;
}

/**
 * The unique-column values of the page at `offset` (0-based, below the shape's total) in `order`,
 * which keptOrderServes approved: the slice holding the offset is found from kept counts, then the
 * rest is skipped from that slice's first row on the index. Read in the snapshot `counts` were.
 * With them, `within`: a condition on the table that selects exactly the page's rows, by the
 * order's index range from its first row to its last.
 */
export async function keptPage(
  db: Executor,
  studyKey: string,
  shape: KeptShape,
  counts: KeptCounts,
  order: readonly OrderColumn[],
  offset: number,
  limit: number,
): Promise<{ keys: string[]; within: SQL | undefined }> {
  const direction = order[0]!.direction;
  const column = sql.raw(timeColumn(shape));
  const unique = order[1]!.column;
  const { lo, hi } = shape.bounds;
  const { span, summary } = counts;
  const daySlices = new Map<number, Map<number, number>>();
  /** The slice holding position `at` (0-based) in the order, and the rows of it before that position. */
  const sliceAt = async (at: number) => {
    const day = locate(summary.days, at, direction);
    if (!day) return null;
    let slices = daySlices.get(day.bucket);
    if (!slices) {
      if (summary.edgeDays.has(day.bucket)) {
        slices = new Map([...summary.edgeSlices].filter(([slice]) => bucketOf(slice, span.perDay) === day.bucket));
      } else {
        const rows = await db.execute<{ bucket: string; n: string }>(
          bucketSums(studyKey, shape, span.width, [slicesOf(span, day.bucket)]),
        );
        slices = new Map(rows.map((row) => [Number(row.bucket), Number(row.n)]));
      }
      daySlices.set(day.bucket, slices);
    }
    return locate(slices, day.rest, direction);
  };
  const startOf = (slice: number) => slice * span.width;
  const endOf = (slice: number) => slice * span.width + span.width - 1;
  let from = direction === "asc" ? lo : hi;
  let to = direction === "asc" ? hi : lo;
  let skip = offset;
  if (offset > 0) {
    const slice = await sliceAt(offset);
    if (slice) {
      // the page starts `rest` rows into this slice, counted from the slice's first row in the order
      from =
        direction === "asc"
          ? Math.max(lo ?? startOf(slice.bucket), startOf(slice.bucket))
          : Math.min(hi ?? endOf(slice.bucket), endOf(slice.bucket));
      skip = slice.rest;
    }
    // no slice found: the counts and rows disagree (they cannot in one snapshot); skip from the bound
  }
  if (shape.target === "participants" && shape.flag) {
    // The page also ends in a known slice. With the flag read from the table, PostgreSQL guesses its
    // share at 0.5 % and, told only where the page starts, may fetch and sort every row from there
    // on; bounded at both ends, it reads at most the page's slices.
    const slice = await sliceAt(Math.min(offset + limit, counts.total) - 1);
    if (slice) {
      to =
        direction === "asc"
          ? Math.min(hi ?? endOf(slice.bucket), endOf(slice.bucket))
          : Math.max(lo ?? startOf(slice.bucket), startOf(slice.bucket));
    }
  }
  const bounds = [partOf(studyKey, shape, "rows")];
  const rangeFrom = direction === "asc" ? from : to;
  const rangeTo = direction === "asc" ? to : from;
  if (rangeFrom !== null) bounds.push(sql`${column} >= ${rangeFrom}::bigint`);
  if (rangeTo !== null) bounds.push(sql`${column} <= ${rangeTo}::bigint`);
  const dir = sql.raw(direction);
  const rows = await db.execute<{ t: string; k: string }>(
    sql`select ${column}::text as t, ${sql.identifier(unique)}::text as k from ${rowTable(shape)}
        where ${sql.join(bounds, sql` and `)}
        order by ${column} ${dir}, ${sql.identifier(unique)} ${dir}
        offset ${skip} limit ${limit}`,
  );
  const first = rows[0];
  const last = rows.at(-1);
  if (!first || !last) return { keys: [], within: undefined };
  // the page's rows are the shape's rows from its first to its last in the order: read so, they are
  // fetched along the order's index (neighbours in the table) instead of by one key lookup each
  const uniqueType = sql.raw(shape.target === "participants" ? "text" : "uuid");
  const at = (row: { t: string; k: string }) => sql`(${row.t}::bigint, ${row.k}::${uniqueType})`;
  const [low, high] = direction === "asc" ? [first, last] : [last, first];
  const pair = sql`(${column}, ${sql.identifier(unique)})`;
  // The plain bounds on the time column select nothing more; they are there for the planner, which
  // cannot estimate a row comparison: it guessed about a tenth of the study's rows for a page's
  // range and chose a parallel scan, whose workers' start took 20–45 ms of a cold page that reads
  // 0.3 ms.
  const within = sql`(${partOf(studyKey, shape, "rows")}
    and ${column} >= ${low.t}::bigint and ${column} <= ${high.t}::bigint
    and ${pair} >= ${at(low)} and ${pair} <= ${at(high)})`;
  return { keys: rows.map((row) => row.k), within };
}
