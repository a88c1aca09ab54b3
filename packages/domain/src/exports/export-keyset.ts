import { sql, type SQL } from "drizzle-orm";
import { executePrepared, type Executor } from "@studyflow/db";

/** A column of an export's order, with the type its bound value is cast to. */
export interface KeyColumn {
  expression: SQL;
  cast: "bigint" | "uuid" | "text";
}

/**
 * The rows of one export in their order: a table, the export's selection on it, and the key the
 * rows are ordered by (unique: it ends with the row's id). Chunks and checkpoints are positions in
 * this order, written as the JSON array of the key's values.
 */
export interface ExportSelection {
  from: SQL;
  where: SQL;
  keys: readonly KeyColumn[];
  direction: "asc" | "desc";
}

export type KeyValues = (string | number)[];

export const encodeKey = (values: KeyValues): string => JSON.stringify(values);

function decodeKey(encoded: string, length: number): KeyValues {
  const values = JSON.parse(encoded) as unknown;
  if (!Array.isArray(values) || values.length !== length)
    throw new Error(`export checkpoint "${encoded}" is malformed`);
  return values as KeyValues;
}

const tuple = (parts: SQL[]) => sql`(${sql.join(parts, sql`, `)})`;

/** `key > position` in the export's order (`<` when it runs descending). */
function beyond(selection: ExportSelection, encoded: string, inclusive: boolean, after: boolean): SQL {
  const values = decodeKey(encoded, selection.keys.length);
  const left = tuple(selection.keys.map((key) => key.expression));
  const right = tuple(selection.keys.map((key, index) => sql`${values[index]}::${sql.raw(key.cast)}`));
  const forward = selection.direction === "asc" ? after : !after;
  const operator = forward ? (inclusive ? ">=" : ">") : inclusive ? "<=" : "<";
  return sql`${left} ${sql.raw(operator)} ${right}`;
}

const orderBy = (selection: ExportSelection) =>
  sql.join(
    selection.keys.map((key) => sql`${key.expression} ${sql.raw(selection.direction)}`),
    sql`, `,
  );

/** The rows of the selection, as many as it has. */
export async function countSelection(tx: Executor, selection: ExportSelection): Promise<number> {
  const [row] = await tx.execute<{ count: string | number }>(
    sql`select count(*) as count from ${selection.from} where ${selection.where}`,
  );
  return Number(row?.count ?? 0);
}

/**
 * The key of every `chunkSize`-th row, in order: chunk i covers (boundary[i-1], boundary[i]]. One
 * pass over the order's index (row_number over an index scan), done once per export at planning.
 */
export async function selectionBoundaries(
  tx: Executor,
  selection: ExportSelection,
  chunkSize: number,
): Promise<string[]> {
  const keys = selection.keys.map((key, index) => sql`${key.expression} as ${sql.raw(`k${index}`)}`);
  const rows = await tx.execute<Record<string, string | number>>(sql`
    select * from (
      select ${sql.join(keys, sql`, `)}, row_number() over (order by ${orderBy(selection)}) as position
      from ${selection.from} where ${selection.where}
    ) numbered where position % ${chunkSize} = 0 order by position`);
  return rows.map((row) => encodeKey(selection.keys.map((key, index) => normalise(row[`k${index}`], key.cast))));
}

function normalise(value: unknown, cast: KeyColumn["cast"]): string | number {
  return cast === "bigint" ? Number(value) : String(value);
}

/**
 * The next `limit` rows after `after` ("" = from the start) up to and including `upTo` (null =
 * to the end), in order: a keyset read on the order's index, never OFFSET. Each row goes to
 * `onRow` as it arrives from the server, so the caller can be done with a row before the next
 * arrives and no array of the batch is built. A prepared statement of the connection (each of the
 * four shapes the bounds give is parsed once per connection).
 */
export async function streamSelection(
  tx: Executor,
  selection: ExportSelection,
  columns: SQL,
  range: { after: string; upTo: string | null; limit: number },
  onRow: (row: Record<string, unknown>) => void,
): Promise<{ count: number; lastKey: string | null }> {
  const conditions = [selection.where];
  if (range.after !== "") conditions.push(beyond(selection, range.after, false, true));
  if (range.upTo !== null) conditions.push(beyond(selection, range.upTo, true, false));
  const keys = selection.keys.map((key, index) => sql`${key.expression} as ${sql.raw(`k__${index}`)}`);
  let count = 0;
  let last: Record<string, unknown> | undefined;
  await executePrepared<Record<string, unknown>>(
    tx,
    sql`
    select ${columns}, ${sql.join(keys, sql`, `)} from ${selection.from}
    where ${sql.join(conditions, sql` and `)}
    order by ${orderBy(selection)} limit ${range.limit}`,
  ).forEach((row) => {
    count++;
    last = row;
    onRow(row);
  });
  const lastKey = last
    ? encodeKey(selection.keys.map((key, index) => normalise(last![`k__${index}`], key.cast)))
    : null;
  return { count, lastKey };
}

/** A jsonb value as the driver hands it over: parsed, or its text. */
export function jsonValue<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** A text column as the driver hands it over ("" for null). */
export function textValue(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}
