/**
 * CASE import benchmark: writes a case-backend mongodump of one study (participants, survey
 * responses of about 3 KB, reports) to disk, imports it with `import:case` run as its own process,
 * and measures, in one run on one machine,
 *   (a) studyflow: documents/s per collection, timed from the import's own checkpoints (each
 *       collection ends when its checkpoint is completed; the next one starts there), and the CLI
 *       process's peak RSS (VmHWM, polled from /proc);
 *   (b) the floor: PostgreSQL's COPY … FROM STDIN of the same rows (read back from the imported
 *       tables, then streamed through postgres.js) into fresh copies of the same tables, indexes
 *       included.
 * It runs a small scale first (the sizes divided by IMPORT_BENCH_SMALL_DIVISOR) and then the full
 * one, each in a database of its own, and prints how the peak RSS grew between them.
 *
 *   npm run bench:import                               100,000 / 1,000,000 / 200,000, and a tenth of it
 *   IMPORT_BENCH_PARTICIPANTS=10000 IMPORT_BENCH_RESPONSES=100000 IMPORT_BENCH_REPORTS=20000 \
 *     IMPORT_BENCH_SMALL_DIVISOR=5 npm run bench:import
 *   IMPORT_BENCH_GZIP=1 npm run bench:import            the dump as mongodump --gzip writes it
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createGzip, type Gzip } from "node:zlib";
import { Int32, Long, ObjectId, serialize, type Document } from "bson";
import postgres from "postgres";
import { createBenchDatabase } from "./bench-database";
import { processArgs } from "./compiled";
import { runMigrations } from "@studyflow/db";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

function sizeFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw.replaceAll("_", ""));
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number of at least 1: ${raw}`);
  return value;
}

const LARGE = {
  participants: sizeFrom("IMPORT_BENCH_PARTICIPANTS", 100_000),
  responses: sizeFrom("IMPORT_BENCH_RESPONSES", 1_000_000),
  reports: sizeFrom("IMPORT_BENCH_REPORTS", 200_000),
};
const SMALL_DIVISOR = sizeFrom("IMPORT_BENCH_SMALL_DIVISOR", 10);
const GZIP = process.env.IMPORT_BENCH_GZIP === "1";
const INSTANCE = "bench";
const STUDY = "weekly";
/** How often the bench reads the CLI's VmHWM: the peak only grows, so a late read loses nothing but the last interval. */
const RSS_POLL_MS = 100;

type Sizes = typeof LARGE;
const COLLECTIONS = [
  { name: "participants", collection: `${STUDY}_participants`, table: "participants", size: "participants" },
  { name: "responses", collection: `${STUDY}_surveyResponses`, table: "survey_responses", size: "responses" },
  { name: "reports", collection: `${STUDY}_reports`, table: "reports", size: "reports" },
] as const;

const fmt = (value: number) => Math.round(value).toLocaleString("en-US");
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const load = () => loadavg()[0]!.toFixed(1);
const int64 = (value: number) => Long.fromNumber(value);
const localised = (code: string, text: string) => ({ code, parts: [{ dtype: "str", str: text }] });
const participantId = (i: number) => `p${String(i).padStart(9, "0")}`;
/** Answer items per response: 10 make a BSON document of about 3 KB. */
const ANSWERS = 10;

/** Documents shaped as case-backend's Go types store them (pkg/study/types). */
const documents = {
  study: () => ({
    _id: new ObjectId(),
    key: STUDY,
    secretKey: `secret-of-${STUDY}`,
    status: "active",
    props: {
      name: [localised("en", "Weekly")],
      description: [localised("en", "A weekly survey")],
      tags: [],
      startDate: int64(1_700_000_000),
      endDate: int64(0),
      systemDefaultStudy: false,
    },
    configs: { participantFileUploadRule: null, idMappingMethod: "sha256", trackAccount: false },
    notificationSubscriptions: [],
    studyStats: { participantCount: int64(0), tempParticipantCount: int64(0), responseCount: int64(0) },
    nextTimerEvent: int64(0),
    rules: null,
  }),
  survey: () => ({
    _id: new ObjectId(),
    props: { name: [localised("en", "Weekly survey")] },
    availableFor: "active_participants",
    published: int64(1_690_000_000),
    surveyDefinition: {
      key: "weekly",
      items: Array.from({ length: ANSWERS }, (_, j) => ({
        key: `weekly.Q${j}`,
        components: {
          role: "root",
          key: "",
          content: [],
          items: [{ role: "input", key: "rg", content: [localised("en", `Question ${j}`)], description: null }],
          description: null,
        },
      })),
    },
    versionID: "v1",
    metadata: {},
  }),
  participant: (i: number) => ({
    _id: new ObjectId(),
    participantID: participantId(i),
    currentStudySession: "",
    modifiedAt: int64(1_700_000_100 + i),
    enteredAt: int64(1_700_000_000 + i),
    studyStatus: "active",
    flags: { group: i % 2 === 0 ? "a" : "b", consent: "yes" },
    linkingCodes: null,
    assignedSurveys: [
      {
        studyKey: "",
        surveyKey: "weekly",
        validFrom: int64(1_700_000_000),
        validUntil: int64(0),
        category: "prio",
        profileID: "",
      },
    ],
    lastSubmission: { weekly: int64(1_700_000_050 + i) },
    messages: [],
  }),
  response: (i: number, participants: number, id: ObjectId) => {
    const submittedAt = 1_700_000_000 + i * 30;
    return {
      _id: id,
      key: "weekly",
      participantID: participantId(i % participants),
      versionID: "v1",
      openedAt: int64(submittedAt - 600),
      submittedAt: int64(submittedAt),
      arrivedAt: int64(submittedAt + 1),
      responses: Array.from({ length: ANSWERS }, (_, j) => ({
        key: `weekly.Q${j}`,
        meta: {
          position: new Int32(j),
          localeCode: "nl",
          rendered: [int64(submittedAt - 500 + j)],
          displayed: [int64(submittedAt - 490 + j)],
          responded: [int64(submittedAt - 400 + j * 10)],
        },
        response: {
          key: "rg",
          items: [
            { key: "scg", items: [{ key: String((i + j) % 5) }] },
            { key: "other", value: j % 3 === 0 ? `free text answer ${i}-${j}` : "" },
          ],
        },
      })),
      context: { session: `session-${i % 997}`, engineVersion: "1.2.0", language: "nl", platform: "web" },
    };
  },
  report: (i: number, participants: number, responseId: ObjectId) => ({
    _id: new ObjectId(),
    key: i % 2 === 0 ? "symptoms" : "visit",
    participantID: participantId(i % participants),
    responseID: responseId.toHexString(),
    timestamp: int64(1_700_000_000 + i * 30),
    modifiedAt: new Date("0001-01-01T00:00:00Z"),
    data: [
      { key: "fever", value: i % 3 === 0 ? "yes" : "no", dtype: "string" },
      { key: "count", value: String(i % 10), dtype: "int" },
    ],
  }),
};

/** One collection file written document by document, through gzip when asked, with the stream's backpressure. */
async function writeCollection(folder: string, name: string, count: number, make: (i: number) => Document) {
  const file = createWriteStream(path.join(folder, `${name}.bson${GZIP ? ".gz" : ""}`));
  const gzip: Gzip | undefined = GZIP ? createGzip({ level: 1 }) : undefined;
  const sink: Gzip | WriteStream = gzip ?? file;
  const piped = gzip ? pipeline(gzip, file) : undefined;
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const chunk = serialize(make(i));
    bytes += chunk.length;
    if (!sink.write(chunk)) await once(sink, "drain");
  }
  sink.end();
  await (piped ?? once(file, "close"));
  await writeFile(
    path.join(folder, `${name}.metadata.json`),
    JSON.stringify({ indexes: [{ v: 2, key: { _id: 1 }, name: "_id_" }], collectionName: name }),
  );
  return bytes;
}

/** The dump under dir; the BSON bytes of each collection (before gzip). */
async function writeDump(dir: string, sizes: Sizes): Promise<Record<string, number>> {
  const folder = path.join(dir, `${INSTANCE}_studyDB`);
  await mkdir(folder, { recursive: true });
  // the reports point at responses: their ids are drawn first, one per report
  const responseIds = Array.from({ length: Math.min(sizes.reports, sizes.responses) }, () => new ObjectId());
  const bytes: Record<string, number> = {};
  await writeCollection(folder, "study-infos", 1, () => documents.study());
  await writeCollection(folder, `${STUDY}_surveys`, 1, () => documents.survey());
  bytes.participants = await writeCollection(folder, `${STUDY}_participants`, sizes.participants, (i) =>
    documents.participant(i),
  );
  bytes.responses = await writeCollection(folder, `${STUDY}_surveyResponses`, sizes.responses, (i) =>
    documents.response(i, sizes.participants, responseIds[i] ?? new ObjectId()),
  );
  bytes.reports = await writeCollection(folder, `${STUDY}_reports`, sizes.reports, (i) =>
    documents.report(i, sizes.participants, responseIds[i % responseIds.length]!),
  );
  return bytes;
}

async function peakOf(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmHWM:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined; // the process has ended
  }
}

interface ImportRun {
  seconds: number;
  peakRss: number;
  /** Seconds per dump collection, from the checkpoints' completion times. */
  collectionSeconds: Map<string, number>;
  documents: Map<string, number>;
}

/** `import:case --only studies` as its own process, as an operator runs it; VmHWM polled until it exits. */
async function importThroughCli(url: string, dumpDir: string, reportFile: string): Promise<ImportRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url };
  delete env.INIT_CWD;
  delete env.CASE_STUDY_GLOBAL_SECRET;
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      ...(process.env.IMPORT_BENCH_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.IMPORT_BENCH_CPU_PROF] : []),
      ...(await processArgs("cli/main")),
      "import:case",
      "--dump",
      dumpDir,
      "--instance",
      INSTANCE,
      "--only",
      "studies",
      "--report",
      reportFile,
      "--json",
    ],
    { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = once(child, "close") as Promise<[number | null]>;
  let peakRss = 0;
  let running = true;
  void closed.then(() => (running = false));
  while (running) {
    const peak = await peakOf(child.pid!);
    if (peak !== undefined) peakRss = Math.max(peakRss, peak);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, RSS_POLL_MS))]);
  }
  const [code] = await closed;
  const seconds = (Date.now() - started) / 1000;
  if (code !== 0) throw new Error(`import:case exited with ${code}\n${stdout}\n${stderr}`);

  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const checkpoints = await sql<{ collection: string; done: string; completed: Date }[]>`
      select collection, documents_done as done, completed_at as completed from case_import_checkpoints
      where completed_at is not null order by completed_at`;
    const collectionSeconds = new Map<string, number>();
    const counts = new Map<string, number>();
    let previous = started;
    for (const checkpoint of checkpoints) {
      const name = checkpoint.collection.split("/").at(-1)!;
      collectionSeconds.set(name, (checkpoint.completed.getTime() - previous) / 1000);
      counts.set(name, Number(checkpoint.done));
      previous = checkpoint.completed.getTime();
    }
    return { seconds, peakRss, collectionSeconds, documents: counts };
  } finally {
    await sql.end();
  }
}

interface CopyRun {
  rows: number;
  seconds: number;
  bytes: number;
}

/**
 * COPY … FROM STDIN of a table's rows into a fresh table like it (defaults, constraints and
 * indexes; LIKE leaves foreign keys out). The rows are read out to a file first, untimed, by psql
 * (postgres.js's COPY TO stream stalls when paused: porsager/postgres#917); only the load is timed.
 */
async function copyBaseline(url: string, table: string, dir: string): Promise<CopyRun> {
  const file = path.join(dir, `${table}.copy`);
  const psql = spawn("psql", [url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", `copy ${table} to stdout`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const closed = once(psql, "close") as Promise<[number | null]>;
  await pipeline(psql.stdout, createWriteStream(file));
  const [code] = await closed;
  if (code !== 0) throw new Error(`psql COPY TO exited with ${code}`);
  const { size } = await stat(file);

  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const copy = `copy_of_${table}`;
    await sql.unsafe(`create table ${copy} (like ${table} including all)`);
    const started = performance.now();
    const writable = await sql.unsafe(`copy ${copy} from stdin`).writable();
    await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), writable);
    const seconds = (performance.now() - started) / 1000;
    const [row] = await sql.unsafe<{ rows: string }[]>(`select count(*) as rows from ${copy}`);
    return { rows: Number(row!.rows), seconds, bytes: size };
  } finally {
    await sql.end();
    await rm(file, { force: true });
  }
}

interface ScaleFigures {
  sizes: Sizes;
  run: ImportRun;
  copies: Map<string, CopyRun>;
  dumpBytes: Record<string, number>;
  generateSeconds: number;
}

async function benchScale(sizes: Sizes): Promise<ScaleFigures> {
  const dir = await mkdtemp(path.join(tmpdir(), "import-bench-"));
  const database = await createBenchDatabase("sf_bench_import");
  try {
    const generating = performance.now();
    const dumpBytes = await writeDump(path.join(dir, "dump"), sizes);
    const generateSeconds = (performance.now() - generating) / 1000;
    console.log(
      `  dump: ${fmt(sizes.participants)} participants, ${fmt(sizes.responses)} responses ` +
        `(${fmt(dumpBytes.responses! / sizes.responses)} B BSON each), ${fmt(sizes.reports)} reports; ` +
        `written in ${generateSeconds.toFixed(1)} s${GZIP ? " (gzip)" : ""}`,
    );
    await runMigrations(database.url);
    console.log(`  importing (load ${load()}) …`);
    const run = await importThroughCli(database.url, path.join(dir, "dump"), path.join(dir, "report.jsonl"));
    console.log(`  imported in ${run.seconds.toFixed(1)} s; COPY (load ${load()}) …`);
    const copies = new Map<string, CopyRun>();
    for (const { table } of COLLECTIONS) copies.set(table, await copyBaseline(database.url, table, dir));
    return { sizes, run, copies, dumpBytes, generateSeconds };
  } finally {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

function printScale(figures: ScaleFigures) {
  const rows = [["collection", "documents", "import s", "docs/s", "COPY rows", "COPY s", "rows/s", "× COPY"]];
  let importSeconds = 0;
  let importDocuments = 0;
  let copySeconds = 0;
  let copyRows = 0;
  for (const { name, collection, table, size } of COLLECTIONS) {
    const seconds = figures.run.collectionSeconds.get(collection) ?? NaN;
    const done = figures.run.documents.get(collection) ?? 0;
    if (done !== figures.sizes[size]) throw new Error(`${collection}: ${done} of ${figures.sizes[size]} imported`);
    const copy = figures.copies.get(table)!;
    if (copy.rows !== done) throw new Error(`${table}: ${copy.rows} rows for ${done} documents`);
    importSeconds += seconds;
    importDocuments += done;
    copySeconds += copy.seconds;
    copyRows += copy.rows;
    rows.push([
      name,
      fmt(done),
      seconds.toFixed(1),
      fmt(done / seconds),
      fmt(copy.rows),
      copy.seconds.toFixed(1),
      fmt(copy.rows / copy.seconds),
      (done / seconds / (copy.rows / copy.seconds)).toFixed(2),
    ]);
  }
  rows.push([
    "overall",
    fmt(importDocuments),
    importSeconds.toFixed(1),
    fmt(importDocuments / importSeconds),
    fmt(copyRows),
    copySeconds.toFixed(1),
    fmt(copyRows / copySeconds),
    (importDocuments / importSeconds / (copyRows / copySeconds)).toFixed(2),
  ]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) {
    console.log(
      `  ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ")}`,
    );
  }
  console.log(`  CLI: ${figures.run.seconds.toFixed(1)} s from spawn to exit, peak RSS ${mb(figures.run.peakRss)}`);
}

async function main() {
  const small = {
    participants: Math.max(1, Math.round(LARGE.participants / SMALL_DIVISOR)),
    responses: Math.max(1, Math.round(LARGE.responses / SMALL_DIVISOR)),
    reports: Math.max(1, Math.round(LARGE.reports / SMALL_DIVISOR)),
  };
  console.log(
    `CASE import bench: ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), ${mb(totalmem())} RAM, ` +
      `Node ${process.version}, load ${load()}`,
  );
  const results: ScaleFigures[] = [];
  for (const sizes of [small, LARGE]) {
    console.log(`\n${fmt(sizes.participants)} / ${fmt(sizes.responses)} / ${fmt(sizes.reports)}:`);
    const figures = await benchScale(sizes);
    printScale(figures);
    results.push(figures);
  }
  const [first, second] = results as [ScaleFigures, ScaleFigures];
  console.log(
    `\nPeak RSS ${mb(first.run.peakRss)} → ${mb(second.run.peakRss)} ` +
      `(${(second.run.peakRss / first.run.peakRss).toFixed(2)}×) for ${SMALL_DIVISOR}× the documents; load ${load()}`,
  );
}

await main();
