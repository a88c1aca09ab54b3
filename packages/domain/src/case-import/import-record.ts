import { and, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { caseImportRecords, type Executor } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { contentHash } from "./case-values";
import { INSERTED, skipped, UNCHANGED, UPDATED, type DocumentOutcome } from "./import-batch";

/**
 * How one source document becomes one studyflow row, for the importers whose rows are found
 * again through case_import_records: the row a record names, or the row studyflow already has
 * under the same natural key (a template's message type, a grant's subject and action).
 */
export interface RecordedRow {
  kind: string;
  sourceId: string;
  /** What the report says studyflow already has when a row of its own holds the natural key. */
  label: string;
  /** The row holding the natural key, if any. */
  findNatural: (tx: Executor) => Promise<string | undefined>;
  /** Whether the row a record names is still there. */
  exists: (tx: Executor, targetId: string) => Promise<boolean>;
  insert: (tx: Executor) => Promise<string>;
  update: (tx: Executor, targetId: string) => Promise<void>;
  /**
   * The natural key is the whole content (a grant, a role): a row studyflow has is this document
   * already, taken over without --replace.
   */
  sameWhenNatural?: boolean;
  kept?: Record<string, unknown>;
}

/**
 * Decides and (when `write`) writes one document: unchanged when its record has the same content
 * hash and the row is there; updated when the record's row (or, with --replace, studyflow's own
 * row under the natural key) is there; inserted otherwise. A row of studyflow's own under the
 * natural key is left alone without --replace and the document reported.
 */
export async function importRecordedRow(
  tx: Executor,
  row: RecordedRow,
  bytes: Buffer,
  write: boolean,
  replace: boolean,
  ctx: ClockContext,
): Promise<DocumentOutcome> {
  const hash = contentHash(bytes);
  const [record] = await tx
    .select()
    .from(caseImportRecords)
    .where(and(eq(caseImportRecords.kind, row.kind), eq(caseImportRecords.sourceId, row.sourceId)));
  const byRecord = record && (await row.exists(tx, record.targetId)) ? record.targetId : undefined;
  if (byRecord !== undefined && record!.contentHash === hash) return UNCHANGED;
  const natural = await row.findNatural(tx);
  let outcome: DocumentOutcome;
  let target: string | undefined = byRecord;
  if (natural !== undefined && natural !== byRecord) {
    if (byRecord !== undefined) {
      return skipped(`studyflow already has ${row.label} as another row; remove it before importing again`);
    }
    if (!row.sameWhenNatural && !replace) return skipped(`studyflow already has ${row.label}; --replace overwrites it`);
    target = natural;
    outcome = row.sameWhenNatural ? UNCHANGED : UPDATED;
  } else {
    outcome = target === undefined ? INSERTED : UPDATED;
  }
  if (write) {
    if (target === undefined) target = await row.insert(tx);
    else if (outcome !== UNCHANGED) await row.update(tx, target);
    const values = { targetId: target, contentHash: hash, kept: row.kept ?? {}, importedAt: new Date(ctx.clock()) };
    await tx
      .insert(caseImportRecords)
      .values({ kind: row.kind, sourceId: row.sourceId, ...values })
      .onConflictDoUpdate({ target: [caseImportRecords.kind, caseImportRecords.sourceId], set: values });
  }
  return outcome;
}

/** The studyflow id an earlier document of `kind` went to (a researcher, a service account, an account). */
export async function importedTarget(tx: Executor, kind: string, sourceId: string): Promise<string | undefined> {
  const [record] = await tx
    .select({ targetId: caseImportRecords.targetId })
    .from(caseImportRecords)
    .where(and(eq(caseImportRecords.kind, kind), eq(caseImportRecords.sourceId, sourceId)));
  return record?.targetId;
}

/** A Go time.Time as the driver writes it (a BSON date); absent and Go's zero time as null. */
export function goTime(value: unknown): Date | null {
  if (!(value instanceof Date)) return null;
  const ms = value.getTime();
  // time.Time{} is year 1: written as a date when the field has no omitempty
  return Number.isFinite(ms) && ms > Date.UTC(1970, 0, 1) ? value : null;
}

/**
 * The `set` of an upsert in which each named column takes the value the insert brought
 * (`excluded.<column>`): an imported document that changed replaces what the last run wrote.
 */
export function fromExcluded<T extends PgTable>(
  table: T,
  properties: readonly (keyof T["_"]["columns"] & string)[],
): Record<string, SQL> {
  const columns = getTableColumns(table) as Record<string, PgColumn>;
  return Object.fromEntries(
    properties.map((property) => [property, sql`excluded.${sql.identifier(columns[property]!.name)}`]),
  );
}
