/**
 * The patch to postgres.js in patches/ (applied by patch-package at install): each defect it
 * fixes is reproduced against the real PostgreSQL, once with the installed (patched) driver, which
 * must settle every query and recover, and once with a copy of the driver with the patch taken
 * out, which must show the defect. If upstream fixes a defect differently, or the patch stops
 * applying, this test says so.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const repository = path.resolve(here, "../../..");
const PATCH = path.join(repository, "patches/postgres+3.4.9.patch");
const SCENARIOS = path.join(here, "driver-scenarios/connection-close.ts");
const TRANSACTION_SCENARIOS = path.join(here, "driver-scenarios/transactions.ts");
/** The installed driver: npm hoists it to the root, which is where patch-package patches it. */
const INSTALLED = path.join(repository, "node_modules/postgres");

interface Settled {
  ok?: number;
  error?: string;
  hung?: number;
}
interface ScenarioRun {
  exitCode: number;
  outcome?: Record<string, Settled>;
  stderr: string;
}

async function scenario(
  name: string,
  driverDir: string,
  databaseUrl: string,
  file: string = SCENARIOS,
): Promise<ScenarioRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", file, name, driverDir, databaseUrl], {
      timeout: 20_000,
    });
    const line = stdout.trim().split("\n").at(-1) ?? "";
    return { exitCode: 0, outcome: (JSON.parse(line) as { outcome: Record<string, Settled> }).outcome, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { exitCode: typeof failed.code === "number" ? failed.code : -1, stderr: failed.stderr ?? String(error) };
  }
}

describe("the postgres.js patch", () => {
  let database: TestDatabase;
  let unpatchedRoot: string;
  let unpatched: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    unpatchedRoot = await mkdtemp(path.join(tmpdir(), "studyflow-postgres-unpatched-"));
    unpatched = path.join(unpatchedRoot, "postgres");
    await cp(INSTALLED, unpatched, { recursive: true });
    // The patch names node_modules/postgres/<file>: strip a/, node_modules/ and postgres/.
    await run("git", ["apply", "--reverse", "-p3", PATCH], { cwd: unpatched });
  });
  afterAll(async () => {
    await database?.drop();
    if (unpatchedRoot) await rm(unpatchedRoot, { recursive: true, force: true });
  });

  it("is applied to the installed driver (npm ci runs patch-package), the one the database package loads", async () => {
    const loaded = createRequire(path.join(repository, "packages/db/package.json")).resolve("postgres");
    expect(loaded.startsWith(INSTALLED + path.sep)).toBe(true);
    // Taking the patch out of the installed copy must be possible: then it is in.
    await expect(
      run("git", ["apply", "--reverse", "--check", "-p3", PATCH], { cwd: INSTALLED }),
    ).resolves.toBeDefined();
  });

  it("a write after the socket closed rejects the query instead of crashing the process", async () => {
    const patched = await scenario("write-after-close", INSTALLED, database.url);
    expect(patched.exitCode, patched.stderr).toBe(0);
    expect(patched.outcome).toEqual({
      first: { error: "CONNECTION_CLOSED" },
      second: { error: "CONNECTION_CLOSED" },
    });

    const original = await scenario("write-after-close", unpatched, database.url);
    expect(original.exitCode).not.toBe(0);
    expect(original.stderr).toContain("TypeError: Cannot read properties of null (reading 'write')");
    expect(original.stderr).toMatch(/at Immediate\.nextWrite/);
  });

  it("a connection closed with a write deferred can write again: its next query runs", async () => {
    const patched = await scenario("close-with-deferred-write", INSTALLED, database.url);
    expect(patched.exitCode, patched.stderr).toBe(0);
    expect(patched.outcome).toEqual({ first: { error: "CONNECTION_CLOSED" }, second: { ok: 1 } });

    const original = await scenario("close-with-deferred-write", unpatched, database.url);
    expect(original.exitCode, original.stderr).toBe(0);
    expect(original.outcome).toEqual({ first: { error: "CONNECTION_CLOSED" }, second: { hung: 3000 } });
  });

  it("queries sent to a reset connection between its error and its close fail instead of waiting forever", async () => {
    const patched = await scenario("reset-with-queries-in-between", INSTALLED, database.url);
    expect(patched.exitCode, patched.stderr).toBe(0);
    expect(patched.outcome?.first).toEqual({ error: "ECONNRESET" });
    expect(patched.outcome?.between?.hung).toBeUndefined();
    expect(patched.outcome?.between?.error).toMatch(
      /^(CONNECTION_CLOSED|ECONNRESET)(,(CONNECTION_CLOSED|ECONNRESET))*$/,
    );
    expect(patched.outcome?.next).toEqual({ ok: 1 });

    const original = await scenario("reset-with-queries-in-between", unpatched, database.url);
    expect(original.exitCode, original.stderr).toBe(0);
    expect(original.outcome?.between).toEqual({ hung: 3000 });
  });

  it("a statement a transaction sends after losing its connection fails alone; the query waiting for that connection gets its answer", async () => {
    const patched = await scenario("statement-after-transaction-lost", INSTALLED, database.url);
    expect(patched.exitCode, patched.stderr).toBe(0);
    expect(patched.outcome).toEqual({
      lost: { error: "CONNECTION_CLOSED" },
      late: { error: "CONNECTION_CLOSED" },
      waiting: { ok: 42 },
    });

    // 3.4.9 writes the statement to the connection being reopened for the waiting query, whose
    // socket is not there yet: it throws from the timer and the process dies
    const original = await scenario("statement-after-transaction-lost", unpatched, database.url);
    expect(original.exitCode).not.toBe(0);
    expect(original.stderr).toMatch(/at Immediate\.nextWrite/);
  });

  it("a terminated backend's error is not handed to the first query of the next connection", async () => {
    const patched = await scenario("error-before-close", INSTALLED, database.url);
    expect(patched.exitCode, patched.stderr).toBe(0);
    expect(patched.outcome?.second).toEqual({ ok: 1 });

    const original = await scenario("error-before-close", unpatched, database.url);
    expect(original.exitCode, original.stderr).toBe(0);
    // 57P01: "terminating connection due to administrator command", from the old backend
    expect(original.outcome?.second).toEqual({ error: "57P01" });
  });

  it("a transaction's first statement goes to the server with its BEGIN: one round trip fewer", async () => {
    const patched = await scenario("round-trips", INSTALLED, database.url, TRANSACTION_SCENARIOS);
    expect(patched.exitCode, patched.stderr).toBe(0);
    // BEGIN and the statement, then COMMIT; with two statements, the second on its own between them
    expect(patched.outcome).toEqual({ one: 1, single: 2, twoStatements: 3 });

    const original = await scenario("round-trips", unpatched, database.url, TRANSACTION_SCENARIOS);
    expect(original.exitCode, original.stderr).toBe(0);
    expect(original.outcome).toEqual({ one: 1, single: 3, twoStatements: 4 });
  });

  it("a statement sent behind the BEGIN is the transaction's: a failure rolls it back", async () => {
    const patched = await scenario("first-statement-rolls-back", INSTALLED, database.url, TRANSACTION_SCENARIOS);
    expect(patched.exitCode, patched.stderr).toBe(0);
    // 22012: division by zero, the later statement's own error
    expect(patched.outcome).toEqual({ error: "the caller's failure", failed: "22012", rows: 0 });
  });

  it("a BEGIN with options the server refuses runs nothing of the transaction's", async () => {
    const patched = await scenario("refused-begin", INSTALLED, database.url, TRANSACTION_SCENARIOS);
    expect(patched.exitCode, patched.stderr).toBe(0);
    // 42601: syntax error, the BEGIN's; the insert behind it must not have run on its own
    expect(patched.outcome).toEqual({ refused: "42601", rows: 0 });
  });

  it("transactions waiting for a connection each run whole in a transaction of their own", async () => {
    const patched = await scenario("concurrent", INSTALLED, database.url, TRANSACTION_SCENARIOS);
    expect(patched.exitCode, patched.stderr).toBe(0);
    // 24 transactions on 2 connections: every one saw one transaction id throughout, and committed
    expect(patched.outcome).toEqual({ transactions: 24, split: 0, rows: 24 });
  });

  it("a COPY FROM STDIN the server refuses ends its stream with the error instead of leaving it open forever", async () => {
    const patched = await scenario("copy-refused", INSTALLED, database.url);
    expect(patched.exitCode, patched.stderr).toBe(0);
    // 23502: not-null violation
    expect(patched.outcome).toEqual({ refused: { error: "23502" }, accepted: { ok: 0 }, after: { ok: 1 } });

    const original = await scenario("copy-refused", unpatched, database.url);
    expect(original.exitCode, original.stderr).toBe(0);
    expect(original.outcome?.refused).toEqual({ hung: 3000 });
  });
});
