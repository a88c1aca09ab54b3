import { sql, type SQL } from "drizzle-orm";
import type { Executor } from "@studyflow/db";
import type { OrderColumn } from "./paged-read";
import type { KeptShape } from "./time-buckets";

/**
 * Deep pages of a study's participants in participant-id order (the API's default when no sort is
 * given) placed from kept counts per id prefix (participant_id_buckets, migration 0029) instead of
 * skipping every id before the page on the index: the 3-character prefix holding the page's first
 * row is found by summing prefixes in order, then the 4-character one inside it, and only the rest
 * of that prefix's ids is skipped. With hexadecimal ids a 4-character prefix holds about
 * one in 65,000 of the study's ids; with ids sharing a longer common start (`p0000001`…), up to
 * all of them, and the skip is as long as before.
 *
 * A prefix's ids are neighbours in the order only under a byte-order collation ("C", "POSIX",
 * "C.UTF-8"), where any id starting with a prefix sorts at or after it and before every greater
 * prefix. Under another collation (a linguistic one ignores punctuation at first, say) the page is
 * skipped to as before.
 */

/** libc collations whose order is the order of the ids' bytes (code points). */
const BYTE_ORDER = ["C", "POSIX", "C.UTF-8", "C.utf8"];

/** Whether the query is every participant of the study in ascending participant-id order. */
export function idOrderServes(shape: KeptShape, order: readonly OrderColumn[]): boolean {
  return (
    shape.target === "participants" &&
    shape.flag === null &&
    shape.statuses.include === null &&
    shape.statuses.exclude.length === 0 &&
    shape.bounds.lo === null &&
    shape.bounds.hi === null &&
    order.length === 1 &&
    order[0]!.column === "participant_id" &&
    order[0]!.direction === "asc"
  );
}

const collations = sql.join(
  BYTE_ORDER.map((name) => sql`${name}`),
  sql`, `,
);

/**
 * The participant ids of the page at `offset` (0-based, below the study's total) in ascending
 * id order, and `within`, a condition on participants selecting exactly the page's rows by their
 * index range; null when the participant ids' collation is not a byte order (then skip). Read in
 * the snapshot the total was.
 */
export async function idPage(
  db: Executor,
  studyKey: string,
  offset: number,
  limit: number,
): Promise<{ keys: string[]; within: SQL | undefined } | null> {
  const [place] = await db.execute<{ byte_order: boolean; prefix: string | null; before: string | null }>(
    sql`with
      first_level as (
        select prefix, count as n,
               coalesce(sum(count) over (order by prefix rows between unbounded preceding and 1 preceding), 0) as before
        from participant_id_buckets where study_key = ${studyKey} and prefix_length = 3 and count <> 0),
      outer_prefix as (
        select prefix, before from first_level where before + n > ${offset}::bigint order by prefix limit 1),
      second_level as (
        select b.prefix, b.count as n,
               o.before + coalesce(sum(b.count) over (order by b.prefix rows between unbounded preceding and 1 preceding), 0) as before
        from participant_id_buckets b, outer_prefix o
        where b.study_key = ${studyKey} and b.prefix_length = 4 and b.prefix >= o.prefix
          and left(b.prefix, 3) = o.prefix and b.count <> 0),
      inner_prefix as (
        select prefix, before from second_level where before + n > ${offset}::bigint order by prefix limit 1)
      select (
          select case when a.attcollation = 100
                      then d.datlocprovider = 'c' and d.datcollate in (${collations})
                      else c.collprovider = 'c' and c.collcollate in (${collations}) end
          from pg_attribute a
          join pg_collation c on c.oid = a.attcollation
          join pg_database d on d.datname = current_database()
          where a.attrelid = 'participants'::regclass and a.attname = 'participant_id'
        ) as byte_order,
        (select prefix from inner_prefix) as prefix,
        (select before::text from inner_prefix) as before`,
  );
  if (!place?.byte_order) return null;
  // no prefix found: the counts and rows disagree (they cannot in one snapshot); skip from the start
  const start = place.prefix === null ? sql`` : sql` and participant_id >= ${place.prefix}`;
  const skip = place.prefix === null ? offset : offset - Number(place.before);
  const rows = await db.execute<{ k: string }>(
    sql`select participant_id as k from participants where study_key = ${studyKey}${start}
        order by participant_id offset ${skip} limit ${limit}`,
  );
  const first = rows[0];
  const last = rows.at(-1);
  if (!first || !last) return { keys: [], within: undefined };
  return {
    keys: rows.map((row) => row.k),
    within: sql`(study_key = ${studyKey} and participant_id >= ${first.k} and participant_id <= ${last.k})`,
  };
}
