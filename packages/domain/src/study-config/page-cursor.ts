import { desc, sql, type SQL } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import { Invalid } from "../errors";

/**
 * Opaque page cursors for keyset paging: the sort key of a page's last item, which the next page
 * starts after. JSON inside base64url, so any text (a code with '|' or '/') survives the round trip.
 */
export function encodePageCursor(parts: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts), "utf8").toString("base64url");
}

/** What a cursor that this service did not give out is answered with. */
export function invalidCursor(): Invalid {
  return new Invalid("cursor is not one this service gave out: pass the nextCursor of the previous page");
}

/** A part of the type expected; a string PostgreSQL can take (no NUL, no lone surrogate). */
function partFits(part: unknown, type: "string" | "number"): boolean {
  if (type === "number") return typeof part === "number" && Number.isSafeInteger(part);
  return typeof part === "string" && part.isWellFormed() && !part.includes("\u0000");
}

/** The parts of a cursor this service gave out, or Invalid: a cursor is never built by hand. */
export function decodePageCursor(cursor: string, shape: readonly ("string" | "number")[]): (string | number)[] {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parts = undefined;
  }
  if (!Array.isArray(parts) || parts.length !== shape.length || parts.some((part, i) => !partFits(part, shape[i]!))) {
    throw invalidCursor();
  }
  return parts as (string | number)[];
}

/** A page of a keyset-paged list. */
export interface Page<T> {
  items: T[];
  /** Where the next page starts; null on the last page. */
  nextCursor: string | null;
}

/** Limits of one page, shared by the routes and the commands that list. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1_000;

/**
 * A timestamp column as PostgreSQL holds it, to the microsecond, for a keyset cursor: a
 * JavaScript Date keeps milliseconds, and a cursor rounded to them would skip or repeat rows
 * written within one millisecond.
 */
export function exactInstant(column: PgColumn): SQL<string> {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const EXACT_INSTANT_FORMAT = /^[1-9]\d{3}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** An instant as exactInstant writes it, naming a real moment (PostgreSQL would fail on 2026-13-45). */
export function isExactAt(text: string): boolean {
  if (!EXACT_INSTANT_FORMAT.test(text)) return false;
  const parsed = new Date(text);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === text.slice(0, 19);
}

/** What a row's id is: a uuid, or a bigserial number. */
type IdKind = "uuid" | "number";

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Keyset paging newest first over (instant, id), the order of the audit log, a study's e-mail and
 * its tasks: `olderThan` is the condition that starts a page after the cursor (none without one),
 * `pageOf` cuts the rows fetched with `limit + 1` into a page and its next cursor.
 */
export function newestFirst(instant: PgColumn, id: PgColumn, idKind: IdKind) {
  const exact = exactInstant(instant);
  return {
    /** Select it as the row's exact instant: the cursor holds it to the microsecond. */
    exact,
    olderThan(cursor: string | undefined): SQL | undefined {
      if (cursor === undefined) return undefined;
      const [at, key] = decodePageCursor(cursor, ["string", idKind === "uuid" ? "string" : "number"]);
      if (!isExactAt(String(at)) || (idKind === "uuid" && !UUID_TEXT.test(String(key)))) throw invalidCursor();
      return idKind === "uuid"
        ? sql`(${instant}, ${id}) < (${String(at)}::timestamptz, ${String(key)}::uuid)`
        : sql`(${instant}, ${id}) < (${String(at)}::timestamptz, ${Number(key)})`;
    },
    orderBy: [desc(instant), desc(id)],
    pageOf<R, T>(rows: R[], limit: number, keyOf: (row: R) => [string, string | number], item: (row: R) => T): Page<T> {
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      return {
        items: items.map(item),
        nextCursor: rows.length > limit && last !== undefined ? encodePageCursor(keyOf(last)) : null,
      };
    },
  };
}
