// The explorer's pages must be exactly what case-backend's skip-and-limit would serve, whatever
// was remembered before: fast-check generates sorts (one or two keys, either direction, mixed,
// with many ties), filters, page sizes and a sequence of page requests in any order (forward,
// backward, jumps, repeats) through one page cache; every page must equal the slice of the fully
// sorted result, and the totals must match.
import { and, asc, desc, eq, sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants } from "@studyflow/db";
import { ExplorerPageCache, listExplorerParticipants } from "@studyflow/domain/data-explorer";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const STUDY = "paging";
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await createStudy(t.db, { key: STUDY });
  await t.db.insert(participants).values(
    Array.from({ length: 57 }, (_, i) => ({
      studyKey: STUDY,
      participantId: `p${String((i * 37) % 57).padStart(2, "0")}`,
      // few distinct values: most order keys tie, so the tie-break decides
      studyStatus: ["active", "exited", "temporary"][i % 3]!,
      enteredAt: 1_700_000_000 + (i % 4),
      modifiedAt: 1_700_000_000 + (i % 7),
      flags: { group: String(i % 2) },
    })),
  );
});
afterAll(async () => {
  await t.drop();
});

const FIELD_COLUMNS = {
  participantID: participants.participantId,
  studyStatus: participants.studyStatus,
  enteredAt: participants.enteredAt,
  modifiedAt: participants.modifiedAt,
} as const;
type SortField = keyof typeof FIELD_COLUMNS;

const sortArb = fc
  .uniqueArray(fc.constantFrom<SortField>("studyStatus", "enteredAt", "modifiedAt", "participantID"), {
    minLength: 0,
    maxLength: 2,
  })
  .chain((fields) => fc.tuple(...fields.map((field) => fc.constantFrom(1, -1).map((d) => [field, d] as const))))
  .map((entries) => Object.fromEntries(entries) as Partial<Record<SortField, 1 | -1>>);

const filterArb = fc.constantFrom<unknown>(undefined, { "flags.group": "1" }, { studyStatus: { $ne: "exited" } });

/** The whole result in the order case-backend's skip-and-limit pages through (participantID breaks ties). */
async function fullOrder(sort: Partial<Record<SortField, 1 | -1>>, filter: unknown): Promise<string[]> {
  const entries = Object.entries(sort) as [SortField, 1 | -1][];
  const last = entries.at(-1)?.[1] ?? 1;
  const order = entries.map(([field, direction]) =>
    direction === 1 ? asc(FIELD_COLUMNS[field]) : desc(FIELD_COLUMNS[field]),
  );
  if (!entries.some(([field]) => field === "participantID")) {
    order.push(last === 1 ? asc(participants.participantId) : desc(participants.participantId));
  }
  const where =
    filter === undefined
      ? sql`true`
      : "studyStatus" in (filter as object)
        ? sql`${participants.studyStatus} <> 'exited'`
        : sql`${participants.flags} ->> 'group' = '1'`;
  const rows = await t.db
    .select({ id: participants.participantId })
    .from(participants)
    .where(and(eq(participants.studyKey, STUDY), where))
    .orderBy(...order);
  return rows.map((row) => row.id);
}

describe("explorer pages equal skip-and-limit pages, whatever the cache remembered", () => {
  it("for any sort, filter, page size and order of requests", async () => {
    await fc.assert(
      fc.asyncProperty(
        sortArb,
        filterArb,
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 12 }),
        async (sort, filter, limit, pages) => {
          const expected = await fullOrder(sort, filter);
          const cache = new ExplorerPageCache({ clock: systemClock });
          for (const page of pages) {
            const result = await listExplorerParticipants(t.db, STUDY, { sort, filter, page, limit }, cache);
            const served = expected.length < limit ? 1 : page;
            expect(result.totalCount).toBe(expected.length);
            expect(result.page).toBe(served);
            expect(result.rows.map((row) => row.participantId)).toEqual(
              expected.slice((served - 1) * limit, served * limit),
            );
          }
        },
      ),
      { numRuns: 120 },
    );
  });

  it("forgets a study's pages and counts after a delete, and entries expire", async () => {
    let now = 0;
    const cache = new ExplorerPageCache({ ttlMs: 1_000, clock: () => now });
    let loads = 0;
    const load = () => {
      loads += 1;
      return Promise.resolve(5);
    };
    await cache.count("q", STUDY, load);
    await cache.count("q", STUDY, load);
    expect(loads).toBe(1);
    cache.remember("q", STUDY, 10, ["x"]);
    expect(cache.nearestBoundary("q", STUDY, 15)).toEqual({ position: 10, values: ["x"] });
    expect(cache.nearestBoundary("q", STUDY, 9)).toBeUndefined();
    cache.forgetStudy(STUDY);
    await cache.count("q", STUDY, load);
    expect(loads).toBe(2);
    now = 1_001;
    expect(cache.nearestBoundary("q", STUDY, 15)).toBeUndefined();
    await cache.count("q", STUDY, load);
    expect(loads).toBe(3);
  });

  it("drops the least recently used query beyond maxEntries", () => {
    const cache = new ExplorerPageCache({ clock: systemClock, maxEntries: 2 });
    cache.remember("a", STUDY, 0, [1]);
    cache.remember("b", STUDY, 0, [2]);
    expect(cache.nearestBoundary("a", STUDY, 0)).toBeDefined();
    cache.remember("c", STUDY, 0, [3]);
    expect(cache.nearestBoundary("b", STUDY, 0)).toBeUndefined();
    expect(cache.nearestBoundary("a", STUDY, 0)).toBeDefined();
    expect(cache.nearestBoundary("c", STUDY, 0)).toBeDefined();
  });
});
