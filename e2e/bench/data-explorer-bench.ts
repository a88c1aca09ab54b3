/**
 * The data explorer at scale: a study of N participants (default 1M) and N responses to one
 * survey, read through the explorer's domain functions as case-admin reads them. For every query
 * shape case-admin offers (its participant filters with its entry-order sort, its response page
 * with arrival order and date bounds) and the API's defaults, page 1 and a deep page (page 500, or
 * the last page when there are fewer), at case-admin's page size (50) and at CASE's largest (1000).
 *
 * Cold, as printed: every timed request runs on a new database connection (a new server backend:
 * no cached catalog entries or plans), after `DISCARD ALL`, with a new page cache (nothing
 * remembered of the query). PostgreSQL's shared buffers and the OS page cache stay warm: the
 * tables were read just before, and nothing here can drop them on a shared server.
 *
 * Each figure is the median of ROUNDS (default 3) such requests, against the target (50 ms), with
 * its floor measured in the same run: as many rows as the page, in its order from its first row,
 * read on a new connection by a keyset query that already knows that row and applies no filter
 * (the least a page of that size costs without counting, placing or filtering), and the ratio to it.
 *
 *   npx tsx e2e/bench/data-explorer-bench.ts [participants=1000000]
 *   EXPLORER_BENCH_URL=postgres://…/db  reuses (and seeds once) that database instead of a new one
 *   EXPLORER_BENCH_ROUNDS=5             requests per figure
 *   EXPLORER_BENCH_ONLY=flags            only the shapes whose label contains this
 */
import { cpus, loadavg, totalmem } from "node:os";
import { sql, type SQL } from "drizzle-orm";
import { createDb, runMigrations, type Database } from "@studyflow/db";
import type { CaseFilterTarget } from "@studyflow/domain/case-filter";
import {
  ExplorerPageCache,
  listExplorerParticipants,
  listExplorerResponses,
  type ExplorerQuery,
} from "@studyflow/domain/data-explorer";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { recordBenchFigure } from "@studyflow/testkit/bench-summary";
import { createBenchDatabase } from "./bench-database";

const STUDY = "explorer-bench";
const SURVEY = "weekly";
const DEEP_PAGE = 500;
const TARGET_MS = 50;
const ROUNDS = Number(process.env.EXPLORER_BENCH_ROUNDS ?? 3);
/** Seeded times: participants enter within one day (so hours hold many), responses arrive one a second. */
const T0 = 1_700_000_000;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Shape {
  label: string;
  target: Extract<CaseFilterTarget, "participants" | "responses">;
  filter?: Record<string, unknown>;
  sort?: Record<string, 1 | -1>;
}

/** The keyset order of a shape's pages: (time column, unique column) or the unique column alone. */
function orderOf(shape: Shape): { columns: string[]; direction: "asc" | "desc" } {
  const [field, direction] = Object.entries(shape.sort ?? {})[0] ?? [];
  const dir = direction === -1 ? "desc" : "asc";
  if (shape.target === "participants") {
    return field === "enteredAt"
      ? { columns: ["entered_at", "participant_id"], direction: dir }
      : { columns: ["participant_id"], direction: "asc" };
  }
  return { columns: [field === "arrivedAt" ? "arrived_at" : "submitted_at", "id"], direction: dir };
}

async function seed(handle: ReturnType<typeof createDb>, count: number) {
  const started = performance.now();
  await createStudy(handle.db, { key: STUDY });
  await handle.sql`
    insert into participants (study_key, participant_id, study_status, entered_at, modified_at, flags, linking_codes, last_submissions)
    select ${STUDY}, 'p' || lpad(i::text, 7, '0'), case when i % 10 = 0 then 'exited' else 'active' end,
           ${T0} + (i % 86400), ${T0} + i, jsonb_build_object('group', (i % 4)::text),
           case when i % 1000 = 0 then jsonb_build_object('kit', 'k' || i) else '{}'::jsonb end,
           jsonb_build_object(${SURVEY}::text, ${T0} + i)
    from generate_series(1, ${count}) as i`;
  await handle.sql`
    insert into survey_responses (study_key, participant_id, key, version_id, opened_at, submitted_at, arrived_at, responses, context)
    select ${STUDY}, 'p' || lpad(i::text, 7, '0'), ${SURVEY}, 'v1', ${T0} + i - 60, ${T0} + i, ${T0} + i,
           '[]'::jsonb, '{"language":"en"}'::jsonb
    from generate_series(1, ${count}) as i`;
  // as autovacuum leaves a table that has settled: visibility map set, so index-only scans stay index-only
  await handle.sql`vacuum (analyze) participants`;
  await handle.sql`vacuum (analyze) survey_responses`;
  await handle.sql`vacuum (analyze) participant_entry_buckets`;
  await handle.sql`vacuum (analyze) response_arrival_buckets`;
  console.log(
    `seeded ${count} participants and ${count} responses in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** A new server backend with nothing cached, its connection made before the clock starts. */
async function coldConnection(url: string) {
  const handle = createDb(url, { max: 1 });
  await handle.sql`discard all`;
  return handle;
}

function request(db: Database, shape: Shape, page: number, limit: number) {
  const query: ExplorerQuery = { page, limit, filter: shape.filter, sort: shape.sort };
  const cache = new ExplorerPageCache({ clock: systemClock });
  return shape.target === "participants"
    ? listExplorerParticipants(db, STUDY, query, cache)
    : listExplorerResponses(db, STUDY, SURVEY, query, cache);
}

/** The explorer's answer, cold: its time and the page's first row (for the floor). */
async function explorerCold(url: string, shape: Shape, page: number, limit: number) {
  const handle = await coldConnection(url);
  try {
    const started = performance.now();
    const result = await request(handle.db, shape, page, limit);
    const ms = performance.now() - started;
    const first = result.rows[0] as Record<string, unknown> | undefined;
    return { ms, first, totalCount: result.totalCount, served: result.page };
  } finally {
    await handle.close();
  }
}

const COLUMN_VALUE: Record<string, (row: Record<string, unknown>) => unknown> = {
  entered_at: (row) => row.enteredAt,
  participant_id: (row) => row.participantId,
  arrived_at: (row) => row.arrivedAt,
  submitted_at: (row) => row.submittedAt,
  id: (row) => row.id,
};

/** The floor: a page's worth of rows on a new connection, by keyset from the page's first row (known beforehand). */
async function floorCold(url: string, shape: Shape, first: Record<string, unknown>, limit: number) {
  const { columns, direction } = orderOf(shape);
  const table = shape.target === "participants" ? "participants" : "survey_responses";
  const part = shape.target === "participants" ? sql`true` : sql`key = ${SURVEY}`;
  const left = sql.join(
    columns.map((name) => sql.identifier(name)),
    sql`, `,
  );
  const right = sql.join(
    columns.map(
      (name) =>
        sql`${COLUMN_VALUE[name]!(first)}::${sql.raw(name === "id" ? "uuid" : name.endsWith("_at") ? "bigint" : "text")}`,
    ),
    sql`, `,
  );
  const orderBy = sql.join(
    columns.map((name) => sql`${sql.identifier(name)} ${sql.raw(direction)}`),
    sql`, `,
  );
  const statement: SQL = sql`select * from ${sql.identifier(table)}
    where study_key = ${STUDY} and ${part}
      and (${left}) ${sql.raw(direction === "asc" ? ">=" : "<=")} (${right})
    order by ${orderBy} limit ${limit}`;
  const handle = await coldConnection(url);
  try {
    const started = performance.now();
    await handle.db.execute(statement);
    return performance.now() - started;
  } finally {
    await handle.close();
  }
}

async function main() {
  const count = Number(process.argv[2] ?? 1_000_000);
  const reuse = process.env.EXPLORER_BENCH_URL;
  const bench = reuse ? { url: reuse, drop: async () => {} } : await createBenchDatabase("sf_bench_explorer");
  const handle = createDb(bench.url, { max: 2 });
  try {
    await runMigrations(bench.url);
    const [server] = await handle.sql<{ version: string }[]>`select current_setting('server_version') as version`;
    console.log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
        `PostgreSQL ${server?.version ?? "?"}, Node ${process.version}; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    const [seeded] = await handle.sql`select 1 from studies where key = ${STUDY}`;
    if (seeded) console.log(`reusing the seeded study in ${bench.url}`);
    else await seed(handle, count);
    const [sizes] = await handle.sql<{ participants: number; responses: number }[]>`
      select (select count(*)::int from participants where study_key = ${STUDY}) as participants,
             (select count(*)::int from survey_responses where study_key = ${STUDY}) as responses`;
    const n = sizes!.participants;
    const afterDate = T0 + 43_200;
    const allShapes: Shape[] = [
      { label: "all, enteredAt -1 (case-admin's default)", target: "participants", sort: { enteredAt: -1 } },
      { label: "all, enteredAt 1", target: "participants", sort: { enteredAt: 1 } },
      {
        label: 'studyStatus "active", enteredAt -1',
        target: "participants",
        filter: { studyStatus: "active" },
        sort: { enteredAt: -1 },
      },
      {
        label: "enteredAt $gte (after a date), -1",
        target: "participants",
        filter: { enteredAt: { $gte: afterDate } },
        sort: { enteredAt: -1 },
      },
      {
        label: "enteredAt $lte (before a date), 1",
        target: "participants",
        filter: { enteredAt: { $lte: afterDate } },
        sort: { enteredAt: 1 },
      },
      {
        label: "participantID equal, enteredAt -1",
        target: "participants",
        filter: { participantID: `p${String(Math.ceil(n / 2)).padStart(7, "0")}` },
        sort: { enteredAt: -1 },
      },
      {
        label: 'flags.group "1", enteredAt -1',
        target: "participants",
        filter: { "flags.group": "1" },
        sort: { enteredAt: -1 },
      },
      {
        label: "linkingCodes.kit equal, enteredAt -1",
        target: "participants",
        filter: { "linkingCodes.kit": "k1000" },
        sort: { enteredAt: -1 },
      },
      {
        label: "lastSubmission.weekly $gte, enteredAt -1",
        target: "participants",
        filter: { [`lastSubmission.${SURVEY}`]: { $gte: T0 + Math.floor(n / 2) } },
        sort: { enteredAt: -1 },
      },
      { label: "all, no sort (participantID order)", target: "participants" },
      { label: "weekly, arrivedAt -1 (case-admin's)", target: "responses", sort: { arrivedAt: -1 } },
      {
        label: "weekly, arrivedAt $gt, -1",
        target: "responses",
        filter: { arrivedAt: { $gt: T0 + Math.floor(n / 4) } },
        sort: { arrivedAt: -1 },
      },
      {
        label: "weekly, arrivedAt $gt and $lt, -1",
        target: "responses",
        filter: { $and: [{ arrivedAt: { $gt: T0 + 1_000 } }, { arrivedAt: { $lt: T0 + Math.floor(n / 2) } }] },
        sort: { arrivedAt: -1 },
      },
      { label: "weekly, no sort (submittedAt order)", target: "responses" },
    ];
    const only = process.env.EXPLORER_BENCH_ONLY;
    const shapes = only ? allShapes.filter((shape) => shape.label.includes(only)) : allShapes;
    console.log(
      `\n${n} participants, ${sizes!.responses} responses; cold = new connection + DISCARD ALL + new page cache ` +
        `(shared buffers and OS cache warm); median of ${ROUNDS}; target ${TARGET_MS} ms; ` +
        `floor = the page's rows by keyset from its known first row, also cold`,
    );
    const figure = (ms: number) => `${ms.toFixed(1)}`.padStart(7);
    let failures = 0;
    const misses: string[] = [];
    for (const limit of [50, 1_000]) {
      console.log(
        `\nlimit ${limit}${limit === 50 ? " (case-admin's page size)" : " (CASE's largest)"}\n` +
          `${"query".padEnd(44)} ${"total".padStart(8)} ${"p1 ms".padStart(7)} ${"deep".padStart(5)} ${"deep ms".padStart(7)}` +
          ` ${"floor1".padStart(7)} ${"floorD".padStart(7)} ${"×floor".padStart(12)}  < ${TARGET_MS} ms`,
      );
      for (const shape of shapes) {
        const probe = await explorerCold(bench.url, shape, 1, limit);
        const pages = Math.max(1, Math.ceil(probe.totalCount / limit));
        const deep = Math.min(DEEP_PAGE, pages);
        const times = {
          first: [] as number[],
          deep: [] as number[],
          floorFirst: [] as number[],
          floorDeep: [] as number[],
        };
        for (let round = 0; round < ROUNDS; round++) {
          const one = await explorerCold(bench.url, shape, 1, limit);
          const far = await explorerCold(bench.url, shape, deep, limit);
          times.first.push(one.ms);
          times.deep.push(far.ms);
          if (one.first) times.floorFirst.push(await floorCold(bench.url, shape, one.first, limit));
          if (far.first) times.floorDeep.push(await floorCold(bench.url, shape, far.first, limit));
        }
        const first = median(times.first);
        const far = median(times.deep);
        const floorFirst = times.floorFirst.length > 0 ? median(times.floorFirst) : NaN;
        const floorDeep = times.floorDeep.length > 0 ? median(times.floorDeep) : NaN;
        const pass = first < TARGET_MS && far < TARGET_MS;
        if (!pass) {
          failures += 1;
          misses.push(`${shape.label} at limit ${limit}: ${first.toFixed(0)} / ${far.toFixed(0)} ms`);
        }
        const ratios = `${(first / floorFirst).toFixed(1)}/${(far / floorDeep).toFixed(1)}`;
        console.log(
          `${shape.label.padEnd(44)} ${String(probe.totalCount).padStart(8)} ${figure(first)} ${String(deep).padStart(5)} ${figure(far)}` +
            ` ${figure(floorFirst)} ${figure(floorDeep)} ${ratios.padStart(12)}  ${pass ? "pass" : "FAIL"}`,
        );
      }
    }
    console.log(
      `\n${failures} of ${shapes.length * 2} shape × page size figures miss ${TARGET_MS} ms; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    const figures = shapes.length * 2;
    recordBenchFigure({
      bench: "explorer",
      figure: `figures with page 1 and page ${DEEP_PAGE} cold under ${TARGET_MS} ms (${n.toLocaleString("en-US")} participants)`,
      target: `${figures} of ${figures}`,
      result: `${figures - failures} of ${figures}${misses.length > 0 ? `; misses (page 1 / page ${DEEP_PAGE}): ${misses.join("; ")}` : ""}`,
      met: failures === 0,
    });
  } finally {
    await handle.close();
    await bench.drop();
  }
}

await main();
