import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { MAX_RECONNECT_DELAY_SECONDS, createDb } from "../src/client";
import { createTestDatabase, startTcpProxy, type TestDatabase } from "@studyflow/testkit";

/**
 * Two faults of postgres.js 3.4.9 end a process when the server drops its connections (a
 * restart, a failover, pg_terminate_backend). First, it defers small writes with setImmediate; when the connection closes before the
 * deferred write runs, `socket.write` throws from the timer callback and the process dies
 * ("Cannot read properties of null (reading 'write')"). The patch in patches/ (applied by
 * `npm ci` through patch-package) makes that write fail the waiting queries instead. Second, the
 * array-type look-up it runs on every new connection rejects unhandled when the connection drops
 * during it; createDb turns that look-up off. postgres-driver-patch.test.ts reproduces each defect
 * the patch fixes, deterministically; this test is the storm: the process must live through it.
 */

describe("the database driver when the server drops its connections", () => {
  let database: TestDatabase;
  let admin: postgres.Sql;

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = postgres(database.url, { max: 1 });
  });
  afterAll(async () => {
    await admin.end();
    await database.drop();
  });

  it("a process whose backends are terminated over and over keeps running and keeps querying", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("./driver-fault-child.ts", import.meta.url))],
      {
        env: { ...process.env, DATABASE_URL: database.url },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    let terminated = 0;
    // until 12 of its connections were dropped (bounded: 400 rounds of 25 ms; the driver backs off before reconnecting)
    for (let round = 0; round < 400 && terminated < 12; round++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const rows = await admin<{ killed: boolean }[]>`
        select pg_terminate_backend(pid) as killed from pg_stat_activity
        where application_name = 'sf-driver-fault' and datname = current_database()`;
      terminated += rows.filter((row) => row.killed).length;
    }
    // still alive: it answers SIGTERM with its counts
    expect(child.exitCode, stderr).toBeNull();
    child.kill("SIGTERM");
    expect(await exited, stderr).toBe(0);
    const counts = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as { ok: number; failed: number };
    expect(terminated).toBeGreaterThanOrEqual(3);
    expect(counts.ok).toBeGreaterThan(0);
    expect(stderr).not.toMatch(/reading 'write'|triggerUncaughtException/);
  });

  it("a pool whose every connection is reset at once serves its queries again within seconds", async () => {
    // A proxy in front of PostgreSQL that can reset (RST) every connection through it, as a
    // failover or a load balancer does.
    const target = new URL(database.url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const url = new URL(database.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    const pool = createDb(url.toString(), { max: 10 });
    try {
      await Promise.all(Array.from({ length: 10 }, () => pool.sql`select pg_sleep(0.05)`));
      const running = Array.from({ length: 10 }, () => pool.sql`select pg_sleep(0.5)`.catch(() => "failed"));
      await new Promise((resolve) => setTimeout(resolve, 50));
      proxy.reset();
      expect(await Promise.all(running)).toEqual(Array.from({ length: 10 }, () => "failed"));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // postgres.js counts the ten resets as ten failures in a row: its own backoff would hold these
      // for 10–20 s (17 s measured); ours stops at MAX_RECONNECT_DELAY_SECONDS
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 10 }, () => pool.sql<{ one: number }[]>`select 1 as one`));
      const tookMs = Date.now() - started;
      expect(answers.map((rows) => rows[0]?.one)).toEqual(Array.from({ length: 10 }, () => 1));
      expect(tookMs).toBeLessThan(MAX_RECONNECT_DELAY_SECONDS * 1000 + 1000);
    } finally {
      await pool.close(1);
      await proxy.close();
    }
  });
});
