/**
 * The data explorer's deep pages: a study of 1M participants and 1M responses of one survey, read
 * as case-admin reads them (CASE's page and limit, limit 1000), through the explorer's domain
 * functions with the page cache the API router holds. Prints the time of page 1 and page 500 cold
 * (nothing remembered: the count and a skip over the index), warm (the page's start remembered),
 * and of paging on (501 after 500), each the median of a few rounds.
 *
 *   npx tsx e2e/bench/data-explorer-bench.ts [participants=1000000]
 */
import { cpus, loadavg, totalmem } from "node:os";
import { createDb, runMigrations } from "@studyflow/db";
import { ExplorerPageCache, listExplorerParticipants, listExplorerResponses } from "@studyflow/domain/data-explorer";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { createBenchDatabase } from "./bench-database";

const STUDY = "explorer-bench";
const LIMIT = 1_000;
const DEEP_PAGE = 500;
const ROUNDS = 5;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function time(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function main() {
  const count = Number(process.argv[2] ?? 1_000_000);
  const bench = await createBenchDatabase("sf_bench_explorer");
  const handle = createDb(bench.url, { max: 4 });
  try {
    await runMigrations(bench.url);
    const [server] = await handle.sql<{ version: string }[]>`select current_setting('server_version') as version`;
    console.log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
        `PostgreSQL ${server?.version ?? "?"}, Node ${process.version}; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    const db = handle.db;
    await createStudy(db, { key: STUDY });
    const started = performance.now();
    await handle.sql`
      insert into participants (study_key, participant_id, study_status, entered_at, modified_at, flags)
      select ${STUDY}, 'p' || lpad(i::text, 7, '0'), case when i % 10 = 0 then 'exited' else 'active' end,
             1700000000 + (i % 86400), 1700000000 + i, jsonb_build_object('group', (i % 4)::text)
      from generate_series(1, ${count}) as i`;
    await handle.sql`
      insert into survey_responses (study_key, participant_id, key, version_id, opened_at, submitted_at, arrived_at, responses, context)
      select ${STUDY}, 'p' || lpad(i::text, 7, '0'), 'weekly', 'v1', 1700000000 + i - 60, 1700000000 + i, 1700000000 + i,
             '[]'::jsonb, '{"language":"en"}'::jsonb
      from generate_series(1, ${count}) as i`;
    // as autovacuum leaves a table that has settled: visibility map set, so index-only scans stay index-only
    await handle.sql`vacuum (analyze) participants`;
    await handle.sql`vacuum (analyze) survey_responses`;
    console.log(
      `seeded ${count} participants and ${count} responses in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    // deep pages are page 500 (the filtered query holds a quarter of the rows: its page 200)
    const scenarios: {
      label: string;
      deep?: number;
      read: (cache: ExplorerPageCache | undefined, page: number) => Promise<unknown>;
    }[] = [
      {
        label: "participants, by participantID",
        read: (cache, page) => listExplorerParticipants(db, STUDY, { page, limit: LIMIT }, cache),
      },
      {
        label: "participants, by enteredAt desc",
        read: (cache, page) =>
          listExplorerParticipants(db, STUDY, { page, limit: LIMIT, sort: { enteredAt: -1 } }, cache),
      },
      {
        label: 'participants, {"flags.group":"1"}',
        deep: 200,
        read: (cache, page) =>
          listExplorerParticipants(db, STUDY, { page, limit: LIMIT, filter: { "flags.group": "1" } }, cache),
      },
      {
        label: "responses of weekly, by submittedAt",
        read: (cache, page) => listExplorerResponses(db, STUDY, "weekly", { page, limit: LIMIT }, cache),
      },
    ];
    const figure = (ms: number) => `${ms.toFixed(1)} ms`.padStart(10);
    console.log(
      `\n${"query (limit 1000)".padEnd(38)} ${"page 1".padStart(10)} ${"deep cold".padStart(10)} ${"deep warm".padStart(10)} ${"deep+1".padStart(10)} ${"deep no-cache".padStart(13)}`,
    );
    for (const scenario of scenarios) {
      const page1: number[] = [];
      const cold: number[] = [];
      const warm: number[] = [];
      const next: number[] = [];
      const uncached: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // page 1 on a fresh cache: the count and the first page
        page1.push(await time(() => scenario.read(new ExplorerPageCache({ clock: systemClock }), 1)));
        // page 500 on a fresh cache: the count and a skip of 499 000 index entries
        const deep = scenario.deep ?? DEEP_PAGE;
        const cache = new ExplorerPageCache({ clock: systemClock });
        cold.push(await time(() => scenario.read(cache, deep)));
        warm.push(await time(() => scenario.read(cache, deep)));
        next.push(await time(() => scenario.read(cache, deep + 1)));
        // what every request would cost without the cache (count and skip each time)
        uncached.push(await time(() => scenario.read(undefined, deep)));
      }
      console.log(
        `${scenario.label.padEnd(38)} ${figure(median(page1))} ${figure(median(cold))} ${figure(median(warm))} ${figure(median(next))} ${figure(median(uncached)).padStart(13)}`,
      );
    }
  } finally {
    await handle.close();
    await bench.drop();
  }
}

await main();
