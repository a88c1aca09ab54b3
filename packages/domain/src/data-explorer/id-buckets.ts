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
 * prefix. Under another collation (a linguistic one ignores punctuation at first, say), or when
 * participant_id has a collation of its own rather than the database's (no migration gives it
 * one), the page is skipped to as before.
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
 * The total and the rows of the page at `offset` (0-based; the first page when the total is below
 * `limit`, none when past the end) in ascending id order, read with `columns` (of participants) in
 * one statement, so in one snapshot: the total is the sum of the study's 3-character prefixes, the
 * page's prefix is placed from the same counts, the rest of it skipped on the index alone, and the
 * page's rows read by the index range from its first id to its last. Null when the participant
 * ids' collation is not a byte order (then counted and skipped to as any other query).
 *
 * One statement rather than six (a snapshot's BEGIN, SET and COMMIT, the total from the entry
 * counts, the place, the page's ids, their rows): on a new connection each relation a request
 * touches first costs its catalog entries and each statement its describe round trip and plan,
 * which at limit 1000 weighed more than reading the rows.
 */
export async function idPage<T extends Record<string, unknown>>(
  db: Executor,
  studyKey: string,
  offset: number,
  limit: number,
  columns: SQL,
): Promise<{ totalCount: number; rows: T[] } | null> {
  type Row = { byte_order: boolean | null; total_count: string } & { [K in keyof T]: T[K] | null };
  const rows = await db.execute<Row>(
    sql`with
      wanted as materialized (
        select total, case when total < ${limit}::bigint then 0 else ${offset}::bigint end as off
        from (select coalesce(sum(count), 0)::bigint as total from participant_id_buckets
              where study_key = ${studyKey} and prefix_length = 3) counted),
      first_level as (
        select prefix, count as n,
               coalesce(sum(count) over (order by prefix rows between unbounded preceding and 1 preceding), 0) as before
        from participant_id_buckets where study_key = ${studyKey} and prefix_length = 3 and count <> 0),
      outer_prefix as (
        select prefix, before from first_level where before + n > (select off from wanted) order by prefix limit 1),
      second_level as (
        select b.prefix, b.count as n,
               o.before + coalesce(sum(b.count) over (order by b.prefix rows between unbounded preceding and 1 preceding), 0) as before
        from participant_id_buckets b, outer_prefix o
        where b.study_key = ${studyKey} and b.prefix_length = 4 and b.prefix >= o.prefix
          and left(b.prefix, 3) = o.prefix and b.count <> 0),
      inner_prefix as (
        select prefix, before from second_level where before + n > (select off from wanted) order by prefix limit 1),
      place as materialized (
        select (
            select a.attcollation = 100 and d.datlocprovider = 'c' and d.datcollate in (${collations})
            from pg_attribute a
            join pg_database d on d.datname = current_database()
            where a.attrelid = 'participants'::regclass and a.attname = 'participant_id'
          ) as byte_order,
          -- the ids' collation (the prefixes are "C"), so that the participants index serves the skip;
          -- no prefix found: the counts and rows disagree (they cannot in one snapshot), skip from the start
          coalesce((select prefix from inner_prefix), '') collate "default" as prefix,
          coalesce((select before from inner_prefix), 0) as before),
      page as materialized (
        select participant_id as k from participants
        where (select off < total from wanted) and study_key = ${studyKey} and participant_id >= (select prefix from place)
        order by participant_id offset ((select off from wanted) - (select before from place))::bigint limit ${limit}::bigint)
    select (select byte_order from place) as byte_order, (select total from wanted)::text as total_count, r.*
    from (values (1)) one (x)
    left join lateral (
      select ${columns} from participants
      where (select byte_order from place) and study_key = ${studyKey}
        and participant_id >= (select min(k) from page) and participant_id <= (select max(k) from page)
    ) r on true
    order by r.participant_id`,
  );
  const first = rows[0];
  if (!first?.byte_order) return null;
  return {
    totalCount: Number(first.total_count),
    rows: first.participant_id === null ? [] : (rows as unknown as T[]),
  };
}
