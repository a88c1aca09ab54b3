import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { count } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, permissions, profiles, studies, users } from "@studyflow/db";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { DEMO_EMAIL } from "../src/demo";
import { runWithSettings } from "./run-with-settings";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const execFileAsync = promisify(execFile);

/** A production environment as an operator's `.env` gives it: fresh keys, no demo mode. */
const production = () => ({
  NODE_ENV: "production",
  MANAGEMENT_JWT_SECRET: randomBytes(48).toString("base64"),
  PARTICIPANT_JWT_SECRET: randomBytes(48).toString("base64"),
});

const REFUSAL = /the demo seed refuses to run with NODE_ENV=production.*Nothing was written.*STUDYFLOW_DEMO=true/;

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

describe("the demo seed in production", () => {
  let database: TestDatabase;
  let outDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    outDir = await mkdtemp(join(tmpdir(), "studyflow-demo-production-"));
  });

  afterAll(async () => {
    await database.drop();
    await rm(outDir, { recursive: true, force: true });
  });

  /** Rows of every table the seed writes. */
  async function rowCounts() {
    const db = database.db;
    const [[s], [p], [u], [pr], [g]] = await Promise.all([
      db.select({ n: count() }).from(studies),
      db.select({ n: count() }).from(participants),
      db.select({ n: count() }).from(users),
      db.select({ n: count() }).from(profiles),
      db.select({ n: count() }).from(permissions),
    ]);
    return { studies: s?.n, participants: p?.n, users: u?.n, profiles: pr?.n, permissions: g?.n };
  }
  const empty = { studies: 0, participants: 0, users: 0, profiles: 0, permissions: 0 };

  it.each([
    ["without STUDYFLOW_DEMO", {}],
    ["with STUDYFLOW_DEMO=false", { STUDYFLOW_DEMO: "false" }],
  ])("refuses %s: exit 1, the reason, no file and nothing in the database", async (_, mode) => {
    const out = join(outDir, "refused", "demo.json");
    const result = await runWithSettings(database, ["demo:seed", "--participants", "20", "--out", out, "--json"], {
      ...production(),
      ...mode,
    });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(JSON.parse(result.stderr)).toEqual({ error: expect.stringMatching(REFUSAL) });
    expect(await exists(join(outDir, "refused"))).toBe(false);
    expect(await rowCounts()).toEqual(empty);
  });

  it("refuses the walkthrough's own seeding too, before it calls the API", async () => {
    const result = await runWithSettings(database, ["demo", "--base-url", "http://127.0.0.1:9"], production());
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(REFUSAL);
    expect(result.stderr).not.toContain("127.0.0.1:9");
    expect(await rowCounts()).toEqual(empty);
  });

  it("refuses as a process: the entry exits non-zero and the database stays empty", async () => {
    const out = join(outDir, "process", "demo.json");
    const failure = await execFileAsync(
      "npx",
      ["tsx", "apps/cli/src/main.ts", "demo:seed", "--participants", "20", "--out", out],
      { cwd: repoRoot, env: { ...process.env, ...production(), DATABASE_URL: database.url } },
    ).then(
      () => undefined,
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe("");
    expect(failure?.stderr).toMatch(REFUSAL);
    expect(await exists(join(outDir, "process"))).toBe(false);
    expect(await rowCounts()).toEqual(empty);
  });

  it("seeds where the deployment is the demo (STUDYFLOW_DEMO=true), as docker-compose.demo.yml sets it", async () => {
    const out = join(outDir, "demo", "demo.json");
    const result = await runWithSettings(database, ["demo:seed", "--participants", "20", "--out", out, "--json"], {
      ...production(),
      STUDYFLOW_DEMO: "true",
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ out, demo: { studyKey: "demo-study", userEmail: DEMO_EMAIL } });
    expect(await exists(out)).toBe(true);
    expect(await rowCounts()).toEqual({ studies: 1, participants: 21, users: 1, profiles: 2, permissions: 3 });
  });
});
