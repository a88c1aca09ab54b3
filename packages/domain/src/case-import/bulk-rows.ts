import { getTableColumns, getTableName, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { setImmediate } from "node:timers/promises";
import { rawClientOf, type Executor } from "@studyflow/db";
import { JsonText } from "./bson-json";
import {
  DOCUMENTS_PER_TURN,
  IGNORED,
  INSERTED,
  skipped,
  UNCHANGED,
  UPDATED,
  type BatchDocument,
  type CollectionImporter,
  type DocumentOutcome,
  type PreparedBatch,
} from "./import-batch";

/**
 * The importer of the large collections (responses, reports, confidential responses): documents
 * that each become one row of one table under an id of their own. Per batch, one statement finds
 * which ids studyflow has; the new rows go in with one `COPY … FROM STDIN` (PostgreSQL's own bulk
 * load, the floor the import is measured against), and the rows it had are updated in one
 * statement where a compared column differs (the rest are unchanged). A dry run asks the same
 * questions and writes nothing.
 *
 * Per document this costs its fields' text and, for answers, one pass over their bytes
 * (bson-json.ts). drizzle's multi-row insert (a parameter and a mapping call per value) and a
 * read of each batch's rows before writing had made the import a fifth of COPY's speed.
 */
export interface BulkRows<T extends PgTable, Row extends Record<string, unknown>> {
  table: T;
  /** The row of a document under its id, or an outcome when it cannot be imported or is not asked for. */
  plan: (document: BatchDocument["document"]) => { id: string; row: Row } | DocumentOutcome;
  /** Columns an imported document replaces; a rerun whose document has the same values there is unchanged. */
  compared: readonly (keyof Row & keyof T["_"]["columns"] & string)[];
  /** Array fields `plan` reads from their bytes (rawArrayJson). */
  rawFields?: Readonly<Record<string, boolean>>;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A text of COPY's text format: backslash, tab, newline and carriage return escaped. */
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
const copyText = (text: string) =>
  COPY_SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (special) => COPY_ESCAPES[special]!) : text;

/** An identifier of the schema (a table's or column's name), quoted for SQL text. */
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** One value as a field of COPY's text format, for a column of `sqlType`. */
function copyField(value: unknown, sqlType: string): string {
  if (value === null || value === undefined) return "\\N";
  if (value instanceof JsonText) return value.text.includes("\\") ? value.text.replaceAll("\\", "\\\\") : value.text;
  if (sqlType === "jsonb" || sqlType === "json") {
    // JSON.stringify escapes every control character, so only its backslashes need doubling
    const json = JSON.stringify(value);
    return json.includes("\\") ? json.replaceAll("\\", "\\\\") : json;
  }
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "boolean") return value ? "t" : "f";
  if (typeof value === "string") return copyText(value);
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  throw new Error(`a ${typeof value} has no COPY text for a ${sqlType} column`);
}

/**
 * New rows straight into their table with `COPY … FROM STDIN`, inside the caller's transaction.
 * The rows are keyed by the table's property names and all have the same ones; a column none of
 * them has takes its default.
 */
export async function copyRows(tx: Executor, table: PgTable, rows: readonly Record<string, unknown>[]) {
  if (rows.length === 0) return;
  const copied = Object.entries(getTableColumns(table) as Record<string, PgColumn>).filter(
    ([property]) => rows[0]![property] !== undefined,
  );
  const text = rows
    .map((row) => copied.map(([property, column]) => copyField(row[property], column.getSQLType())).join("\t"))
    .join("\n");
  const names = copied.map(([, column]) => quoted(column.name)).join(", ");
  const stream = await rawClientOf(tx)
    .unsafe(`copy ${quoted(getTableName(table))} (${names}) from stdin`)
    .writable();
  await new Promise<void>((resolve, reject) => {
    stream.on("error", reject);
    stream.on("finish", resolve);
    stream.end(`${text}\n`);
  });
}

export function bulkRowsImporter<T extends PgTable, Row extends Record<string, unknown>>(
  spec: BulkRows<T, Row>,
): CollectionImporter {
  const columns = Object.entries(getTableColumns(spec.table) as Record<string, PgColumn>);
  const idColumn = columns.find(([, column]) => column.primary);
  if (!idColumn) throw new Error("a bulk-imported table needs a primary key");
  const [idProperty, { name: idName }] = idColumn;
  const record = sql.join(
    columns.map(([, column]) => sql`${sql.identifier(column.name)} ${sql.raw(column.getSQLType())}`),
    sql`, `,
  );
  const comparedNames = spec.compared.map((property) => {
    const entry = columns.find(([key]) => key === property);
    if (!entry) throw new Error(`${property} is not a column of the table`);
    return entry[1].name;
  });
  const compared = (alias: string) =>
    sql.join(
      comparedNames.map((name) => sql`${sql.identifier(alias)}.${sql.identifier(name)}`),
      sql`, `,
    );
  const id = sql.identifier(idName);

  const prepare = async (batch: readonly BatchDocument[]): Promise<PreparedBatch> => {
    const outcomes: (DocumentOutcome | undefined)[] = batch.map(() => undefined);
    const planned = new Map<string, { at: number; row: Record<string, unknown> }>();
    for (const [at, { document }] of batch.entries()) {
      if (at > 0 && at % DOCUMENTS_PER_TURN === 0) await setImmediate();
      let plan: ReturnType<typeof spec.plan>;
      try {
        plan = spec.plan(document);
      } catch (error) {
        outcomes[at] = skipped(errorText(error));
        continue;
      }
      if ("kind" in plan) {
        outcomes[at] = plan;
        continue;
      }
      const earlier = planned.get(plan.id);
      if (earlier) outcomes[earlier.at] = skipped(`${plan.id} appears again later`);
      planned.set(plan.id, { at, row: { ...plan.row, [idProperty]: plan.id } });
    }

    return async (tx: Executor, write: boolean) => {
      if (planned.size > 0) {
        const ids = [...planned.keys()];
        const found = (await tx.execute(
          sql`select ${id}::text as id from ${spec.table} where ${id} = any(string_to_array(${ids.join(",")}, ',')::uuid[])`,
        )) as unknown as { id: string }[];
        const had = new Set(found.map((row) => row.id));
        const fresh: Record<string, unknown>[] = [];
        const kept: Record<string, unknown>[] = [];
        for (const [key, { at, row }] of planned) {
          if (had.has(key)) kept.push(row);
          else {
            fresh.push(row);
            outcomes[at] = INSERTED;
          }
        }
        if (write && fresh.length > 0) await copyRows(tx, spec.table, fresh);
        if (kept.length > 0) {
          // what studyflow has under these ids: updated where a compared column differs
          const json = JSON.stringify(
            kept.map((row) => {
              const byName: Record<string, unknown> = {};
              for (const [property, column] of columns) byName[column.name] = row[property];
              return byName;
            }),
          );
          const source = sql`jsonb_to_recordset(${json}::jsonb) as r(${record})`;
          const differs = sql`t.${id} = r.${id} and (${compared("t")}) is distinct from (${compared("r")})`;
          const changed = (await tx.execute(
            write
              ? sql`update ${spec.table} as t set ${sql.join(
                  comparedNames.map((name) => sql`${sql.identifier(name)} = r.${sql.identifier(name)}`),
                  sql`, `,
                )} from ${source} where ${differs} returning t.${id}::text as id`
              : sql`select t.${id}::text as id from ${source} join ${spec.table} as t on ${differs}`,
          )) as unknown as { id: string }[];
          const updated = new Set(changed.map((row) => row.id));
          for (const row of kept) {
            const key = row[idProperty] as string;
            outcomes[planned.get(key)!.at] = updated.has(key) ? UPDATED : UNCHANGED;
          }
        }
      }
      return outcomes.map((outcome) => outcome ?? IGNORED);
    };
  };
  return {
    prepareBatch: prepare,
    importBatch: async (tx, batch, write) => (await prepare(batch))(tx, write),
    ...(spec.rawFields === undefined ? {} : { rawFields: spec.rawFields }),
  };
}
