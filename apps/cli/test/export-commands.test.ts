import { mkdtemp, readFile, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, reports, surveyResponses, tasks } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import {
  createTestDatabase,
  gunzipOneMember,
  testRedisUrl,
  uniqueQueuePrefix,
  type TestDatabase,
} from "@studyflow/testkit";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { eq } from "drizzle-orm";
import { createCapturedOutput, describeFailure, loadConfig, parseCommandLine, type CliContext } from "../src/index";
import type { FollowHooks } from "../src/commands/export-task";
import { LINE_INTERVAL_MS, createProgressReporter, describeSnapshot, progressModeFor } from "../src/progress";

/** A stand-in for stderr that keeps what is written; `isTTY` makes it a terminal for cli-progress. */
function capturedStream(isTTY: boolean) {
  let written = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      written += chunk.toString();
      done();
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (isTTY) {
    stream.isTTY = true;
    stream.columns = 120;
  }
  return {
    stream,
    text: () => written,
    // eslint-disable-next-line no-control-regex -- the bar's cursor and line escapes
    plain: () => written.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]/g, ""),
  };
}

describe("progress display", () => {
  it("picks the bar on a terminal, lines elsewhere, nothing under --json", () => {
    expect(progressModeFor({ write: () => true, isTTY: true }, false)).toBe("bar");
    expect(progressModeFor({ write: () => true }, false)).toBe("lines");
    expect(progressModeFor({ write: () => true, isTTY: true }, true)).toBe("none");
  });

  it("says processed of target with a percentage that reaches 100 only when done", () => {
    expect(describeSnapshot({ status: "in_progress", processedCount: 1_999, targetCount: 2_000 }, "responses")).toBe(
      "1,999 of 2,000 responses (99 %) running",
    );
    expect(describeSnapshot({ status: "completed", processedCount: 0, targetCount: 0 }, "reports")).toBe(
      "0 of 0 reports (100 %) completed",
    );
    expect(describeSnapshot({ status: "queued", processedCount: 0, targetCount: 0 }, "reports")).toBe(
      "0 of 0 reports (0 %) queued",
    );
  });

  it("writes a line per status change and at most one per interval while the count moves", () => {
    const out = capturedStream(false);
    let now = 0;
    const reporter = createProgressReporter({
      mode: "lines",
      stream: out.stream,
      label: "export 1234abcd",
      unit: "responses",
      clock: () => now,
    });
    reporter.update({ status: "queued", processedCount: 0, targetCount: 300 });
    reporter.update({ status: "in_progress", processedCount: 0, targetCount: 300 });
    now += 1_000;
    reporter.update({ status: "in_progress", processedCount: 100, targetCount: 300 });
    now += LINE_INTERVAL_MS;
    reporter.update({ status: "in_progress", processedCount: 200, targetCount: 300 });
    now += 10;
    reporter.update({ status: "completed", processedCount: 300, targetCount: 300 });
    reporter.stop();
    expect(out.text().split("\n").filter(Boolean)).toEqual([
      "export 1234abcd: 0 of 300 responses (0 %) queued",
      "export 1234abcd: 0 of 300 responses (0 %) running",
      "export 1234abcd: 200 of 300 responses (66 %) running",
      "export 1234abcd: 300 of 300 responses (100 %) completed",
    ]);
  });

  it("draws a cli-progress bar on a terminal and leaves its final state", () => {
    const out = capturedStream(true);
    const reporter = createProgressReporter({
      clock: systemClock,
      mode: "bar",
      stream: out.stream,
      label: "export 1234abcd",
      unit: "participants",
    });
    reporter.update({ status: "in_progress", processedCount: 50, targetCount: 200 });
    reporter.update({ status: "completed", processedCount: 200, targetCount: 200 });
    reporter.stop();
    const shown = out.plain();
    expect(shown).toContain("export 1234abcd [");
    expect(shown).toMatch(/100% \| 200\/200 participants \| completed/);
    expect(out.text()).toContain("\u001b[?25l"); // the cursor is hidden while the bar runs…
    expect(out.text()).toContain("\u001b[?25h"); // …and shown again after
  });

  it("shows nothing under --json", () => {
    const out = capturedStream(true);
    const reporter = createProgressReporter({
      clock: systemClock,
      mode: "none",
      stream: out.stream,
      label: "x",
      unit: "reports",
    });
    reporter.update({ status: "completed", processedCount: 1, targetCount: 1 });
    reporter.stop();
    expect(out.text()).toBe("");
  });
});

const STUDY = "flu-watch";
const SURVEY = "intake";
const RESPONSES = 25;
const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z

const localised = (value: string) => [{ code: "en", parts: [{ dtype: "str", str: value }] }];
/** A one-question CASE survey, as case-editor-tools write it. */
const intakeSurvey = {
  props: { name: localised("Intake") },
  surveyDefinition: {
    key: SURVEY,
    items: [
      {
        key: `${SURVEY}.Q1`,
        components: {
          role: "root",
          items: [
            { role: "title", content: localised("Did you have the flu vaccine this season?") },
            {
              role: "responseGroup",
              key: "rg",
              items: [
                {
                  role: "singleChoiceGroup",
                  key: "scg",
                  items: [
                    { role: "option", key: "yes", content: localised("Yes") },
                    { role: "option", key: "no", content: localised("No") },
                  ],
                },
              ],
            },
          ],
        },
      },
    ],
  },
};

let database: TestDatabase;
let workDir: string;
let prefix: string;
let worker: { stop: () => Promise<void> };

beforeAll(async () => {
  database = await createTestDatabase();
  prefix = uniqueQueuePrefix();
  workDir = await mkdtemp(path.join(tmpdir(), "sf-cli-export-"));
  const db = database.db;
  await createStudy(db, { key: STUDY });
  await createStudy(db, { key: "no-data" });
  const version = await publishSurveyVersion(
    db,
    { studyKey: STUDY, actor: "test", survey: intakeSurvey },
    { clock: Date.now },
  );
  const ids = Array.from({ length: RESPONSES }, (_, i) => `p${String(i).padStart(3, "0")}`);
  await db.insert(participants).values(
    ids.map((participantId, i) => ({
      studyKey: STUDY,
      participantId,
      studyStatus: i % 5 === 4 ? "exited" : "active",
      enteredAt: T0,
      modifiedAt: T0 + i,
      flags: { consent: "yes" },
    })),
  );
  await db.insert(surveyResponses).values(
    ids.map((participantId, i) => ({
      studyKey: STUDY,
      participantId,
      key: SURVEY,
      versionId: version.versionId,
      openedAt: T0 + i * 60,
      submittedAt: T0 + i * 60 + 30,
      arrivedAt: T0 + i * 60 + 31,
      responses: [
        {
          key: `${SURVEY}.Q1`,
          response: { key: "rg", items: [{ key: "scg", items: [{ key: i % 2 === 0 ? "yes" : "no" }] }] },
        },
      ],
    })),
  );
  await db.insert(reports).values(
    ids.slice(0, 6).map((participantId, i) => ({
      studyKey: STUDY,
      participantId,
      key: i < 4 ? "vaccination" : "symptoms",
      eventType: "SUBMIT",
      timestamp: T0 + i,
      data: [{ key: "vaccinated", value: i % 2 === 0 ? "yes" : "no" }],
    })),
  );
  // Batches of 10 over 25 responses: the export commits three parts and moves its progress thrice.
  worker = startWorkerBesideApi({ database, config: { QUEUE_PREFIX: prefix } }, workDir, {
    batchSize: 10,
    chunkSize: 10,
  });
});
afterAll(async () => {
  await worker?.stop();
  await database?.drop();
});

interface RunOptions {
  /** Where progress goes; a non-terminal stand-in by default. */
  terminal?: boolean;
  /** Aborted before the command runs: Ctrl-C at the first poll. */
  interrupted?: boolean;
  /** A queue prefix no worker reads: the task stays queued. */
  prefix?: string;
}

/** Runs a command line as the entry does, with progress and Ctrl-C under the test's control. */
async function run(argv: string[], options: RunOptions = {}) {
  const config = loadConfig({
    NODE_ENV: "test",
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl,
    QUEUE_PREFIX: options.prefix ?? prefix,
  });
  const { output, captured } = createCapturedOutput(argv.includes("--json"));
  const progress = capturedStream(options.terminal === true);
  const interrupt = new AbortController();
  if (options.interrupted) interrupt.abort();
  const hooks: FollowHooks = { progress: progress.stream, interrupt: interrupt.signal, pollIntervalMs: 50 };
  try {
    const commandLine = parseCommandLine(argv);
    if (commandLine.kind !== "run") throw new Error("help");
    const ctx: CliContext & FollowHooks = {
      database,
      config,
      output,
      workingDirectory: workDir,
      clock: systemClock,
      ...hooks,
    };
    await commandLine.run(ctx);
    return { ...captured, progress: progress.plain(), exitCode: 0 };
  } catch (error) {
    const failure = describeFailure(error);
    output.error(failure.message);
    return { ...captured, progress: progress.plain(), exitCode: failure.exitCode };
  }
}

async function json<T = Record<string, any>>(argv: string[], options?: RunOptions): Promise<T> {
  const result = await run([...argv, "--json"], options);
  expect(result.stderr, argv.join(" ")).toBe("");
  expect(result.exitCode, argv.join(" ")).toBe(0);
  // one JSON object, and no progress under --json
  expect(result.stdout.trim().split("\n")).toHaveLength(1);
  expect(result.progress).toBe("");
  return JSON.parse(result.stdout) as T;
}

const csvLines = (text: string) => text.trimEnd().split("\n");

describe("export commands", () => {
  it("export:responses queues the task, follows it with progress lines and downloads the file", async () => {
    const result = await run(["export:responses", "--study", STUDY, "--survey", SURVEY, "--out", "intake.csv"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const target = path.join(workDir, "intake.csv");
    expect(result.stdout).toMatch(new RegExp(`^exported ${RESPONSES} responses to ${target}\\n`));
    expect(result.stdout).toMatch(/ {2}rows +25\n/);
    expect(result.stdout).toMatch(/ {2}size +\d+(\.\d)? (B|kB)\n/);
    expect(result.stdout).toMatch(/ {2}type +text\/csv/);
    // progress on "stderr": a line per status, the last one complete
    const lines = result.progress.trim().split("\n");
    expect(lines.at(-1)).toMatch(/^export [0-9a-f]{8}: 25 of 25 responses \(100 %\) completed$/);
    expect(lines[0]).toMatch(/of 25 responses \(\d+ %\) (queued|running)$/);

    const file = csvLines(await readFile(target, "utf8"));
    expect(file).toHaveLength(RESPONSES + 1);
    expect(file[0]).toMatch(/^ID,participantID,version,opened,submitted,arrived/);
    expect(file[0]).toContain(`${SURVEY}.Q1`);
    // no partial file left beside it
    expect((await readdir(workDir)).filter((name) => name.includes(".part-"))).toEqual([]);
  });

  it("under --json prints one object: the task and the file; options and a filter reach the export", async () => {
    const data = await json([
      "export:responses",
      "--study",
      STUDY,
      "--survey",
      SURVEY,
      "--format",
      "long",
      "--short-keys",
      "--filter",
      '{"participantID": {"$in": ["p001", "p002", "p003"]}}',
      "--sort",
      '{"submittedAt": -1}',
      "--out",
      "long.csv",
    ]);
    expect(data.task).toMatchObject({
      kind: "export-responses",
      status: "completed",
      targetCount: 3,
      processedCount: 3,
    });
    expect(data.file).toMatchObject({ path: path.join(workDir, "long.csv"), rows: 3, contentType: "text/csv" });
    const file = await readFile(path.join(workDir, "long.csv"), "utf8");
    expect(file).toContain("p003");
    expect(file).not.toContain("p004");
    expect(file.indexOf("p003")).toBeLessThan(file.indexOf("p001"));
    expect(file).not.toContain(`${SURVEY}.Q1`); // short keys
  });

  it("draws a bar on a terminal, and --gzip downloads the compressed file as stored", async () => {
    const result = await run(["export:responses", "--study", STUDY, "--survey", SURVEY, "--format", "json", "--gzip"], {
      terminal: true,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.progress).toMatch(/100% \| 25\/25 responses \| completed/);
    const written = /to (\S+)\n/.exec(result.stdout)?.[1] ?? "";
    expect(written).toMatch(/\.json\.gz$/);
    expect(result.stdout).toMatch(/size +.+ \(gzip\)/);
    // one gzip member, whatever the number of batches
    const { responses } = JSON.parse(gunzipOneMember(await readFile(written)).toString("utf8")) as {
      responses: unknown[];
    };
    expect(responses).toHaveLength(RESPONSES);
    // a default name never overwrites: following the same task again is refused, the file kept
    const taskId = /task +([0-9a-f-]{36})/.exec(result.stdout)?.[1] ?? "";
    const before = await readFile(written);
    const again = await run(["export:follow", "--study", STUDY, "--task", taskId]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toBe(`error: ${written} exists already; name another file with --out\n`);
    expect(await readFile(written)).toEqual(before);
  });

  it("export:participants and export:reports export theirs", async () => {
    const people = await json([
      "export:participants",
      "--study",
      STUDY,
      "--filter",
      '{"studyStatus": "active"}',
      "--out",
      "p.json",
    ]);
    expect(people.file).toMatchObject({ rows: 20 });
    const reportsOut = await json([
      "export:reports",
      "--study",
      STUDY,
      "--report-key",
      "vaccination",
      "--out",
      "r.json",
    ]);
    expect(reportsOut.task).toMatchObject({ kind: "export-reports", targetCount: 4 });
    expect(reportsOut.file).toMatchObject({ rows: 4 });
    expect(await readFile(path.join(workDir, "r.json"), "utf8")).toContain("vaccinated");
  });

  it("--no-wait prints the task; export:follow picks it up and downloads it", async () => {
    const started = await json(["export:participants", "--study", STUDY, "--no-wait"]);
    expect(started.task).toMatchObject({ kind: "export-participants", targetCount: RESPONSES });
    expect(started.follow).toBe(`npm run cli -- export:follow --study ${STUDY} --task ${started.task.id}`);
    const text = await run(["export:participants", "--study", STUDY, "--no-wait"]);
    expect(text.stdout).toMatch(
      /^export task [0-9a-f-]{36} queued \(25 participants\)\nfollow it and download its file with: npm run cli -- export:follow/,
    );
    const followed = await json([
      "export:follow",
      "--study",
      STUDY,
      "--task",
      started.task.id,
      "--out",
      "followed.json",
    ]);
    expect(followed.task).toMatchObject({ id: started.task.id, status: "completed" });
    expect(followed.file).toMatchObject({ rows: RESPONSES });
  });

  it("Ctrl-C leaves the task running and says how to follow it; --cancel-on-interrupt cancels it", async () => {
    const idle = uniqueQueuePrefix(); // no worker reads it: the task waits in the queue
    const left = await run(["export:reports", "--study", STUDY, "--json"], { interrupted: true, prefix: idle });
    expect(left.exitCode).toBe(2);
    expect(left.stdout).toBe("");
    const message = (JSON.parse(left.stderr) as { error: string }).error;
    const taskId = /--task ([0-9a-f-]{36})/.exec(message)?.[1] ?? "";
    expect(message).toBe(
      `interrupted: export task ${taskId} keeps running; follow it and download its file with: npm run cli -- export:follow --study ${STUDY} --task ${taskId}`,
    );
    const [kept] = await database.db.select().from(tasks).where(eq(tasks.id, taskId));
    expect(kept?.status).toBe("queued");

    const canceled = await run(["export:reports", "--study", STUDY, "--cancel-on-interrupt"], {
      interrupted: true,
      prefix: idle,
    });
    expect(canceled.exitCode).toBe(2);
    const canceledId = /export task ([0-9a-f-]{36}) canceled/.exec(canceled.stderr)?.[1] ?? "";
    expect(canceled.stderr).toBe(`error: interrupted: export task ${canceledId} canceled\n`);
    const [row] = await database.db.select().from(tasks).where(eq(tasks.id, canceledId));
    expect(row?.status).toBe("canceled");
    // following a canceled export says so
    const follow = await run(["export:follow", "--study", STUDY, "--task", canceledId]);
    expect(follow.exitCode).toBe(2);
    expect(follow.stderr).toMatch(/^error: export task .+ canceled: canceled by operator-cli\n$/);
  });

  it("export:survey-info writes the survey's codebook", async () => {
    const data = await json(["export:survey-info", "--study", STUDY, "--survey", SURVEY]);
    expect(data.file).toMatchObject({
      path: path.join(workDir, `survey-infos_${STUDY}_${SURVEY}.csv`),
      contentType: "text/csv",
    });
    const codebook = csvLines(await readFile(data.file.path as string, "utf8"));
    expect(codebook[0]).toBe("surveyKey,versionID,questionKey,title,responseKey,type,optionKey,optionType,optionLabel");
    expect(codebook.join("\n")).toContain("Did you have the flu vaccine this season?");
    const asJson = await json([
      "export:survey-info",
      "--study",
      STUDY,
      "--survey",
      SURVEY,
      "--format",
      "json",
      "--out",
      "codebook.json",
    ]);
    expect(JSON.parse(await readFile(asJson.file.path as string, "utf8"))).toMatchObject({ key: SURVEY });
  });

  it("exports an empty study as an empty file", async () => {
    const data = await json(["export:participants", "--study", "no-data", "--out", "nobody.json"]);
    expect(data.task).toMatchObject({ status: "completed", targetCount: 0 });
    expect(data.file).toMatchObject({ rows: 0 });
  });

  it("refuses bad input with one error line and a non-zero exit, creating no task", async () => {
    const [runActions] = await database.db
      .insert(tasks)
      .values({ studyKey: STUDY, kind: "run-actions", input: { rules: [], dryRun: true }, createdBy: "someone" })
      .returning();
    const before = await database.db.select({ id: tasks.id }).from(tasks);
    const cases: [string[], RegExp][] = [
      [["export:responses", "--study", "nope", "--survey", SURVEY], /no study "nope"/],
      [["export:responses", "--study", STUDY], /missing required flag --survey/],
      [["export:responses", "--study", STUDY, "--survey", "nosuch"], /surveyKey: no survey "nosuch"/],
      [
        ["export:responses", "--study", STUDY, "--survey", SURVEY, "--format", "xml"],
        /--format must be one of wide, long, json/,
      ],
      [
        ["export:responses", "--study", STUDY, "--survey", SURVEY, "--filter", "{oops"],
        /--filter must be a JSON object/,
      ],
      [["export:responses", "--study", STUDY, "--survey", SURVEY, "--filter", '{"nickname": "x"}'], /nickname/],
      [["export:responses", "--study", STUDY, "--survey", SURVEY, "--include-meta", "colour"], /--include-meta/],
      [["export:participants", "--study", STUDY, "--filter", '{"studyStatus": {"$regex": "a"}}'], /\$regex/],
      [["export:follow", "--study", STUDY, "--task", "00000000-0000-4000-8000-000000000000"], /not found/],
      [["export:survey-info", "--study", STUDY, "--survey", "nosuch"], /no survey "nosuch"/],
      [["export:follow", "--study", STUDY, "--task", runActions!.id], /is a run-actions task, not an export/],
      [["export:follow", "--study", "no-data", "--task", runActions!.id], /not found/],
      [
        ["export:survey-info", "--study", STUDY, "--survey", SURVEY, "--format", "xlsx"],
        /--format must be one of csv, json/,
      ],
      // a directory that does not exist is refused before the export runs, not after
      [
        ["export:responses", "--study", STUDY, "--survey", SURVEY, "--out", "no-such-dir/intake.csv"],
        /--out .*no-such-dir\/intake\.csv: the directory .*no-such-dir does not exist/,
      ],
      [
        ["export:participants", "--study", STUDY, "--out", "no-such-dir/people.json"],
        /the directory .*no-such-dir does not exist/,
      ],
    ];
    for (const [argv, message] of cases) {
      for (const mode of ["json", "text"] as const) {
        const result = await run(mode === "json" ? [...argv, "--json"] : argv);
        expect(result.exitCode, argv.join(" ")).toBe(1);
        expect(result.stdout, argv.join(" ")).toBe("");
        expect(result.stderr.trim().split("\n"), argv.join(" ")).toHaveLength(1);
        const line = mode === "json" ? (JSON.parse(result.stderr) as { error: string }).error : result.stderr;
        expect(line, argv.join(" ")).toMatch(message);
      }
    }
    expect(await database.db.select({ id: tasks.id }).from(tasks)).toEqual(before);
  });
});
