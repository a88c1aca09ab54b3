/**
 * README's tour, "A bulk run from the CLI", run as it stands: the demo study seeded through the
 * CLI (as `npm run demo:up` does), an in-process worker on the test app's database and queue
 * prefix, then the README's shell block with bash. The export is a real task the worker writes;
 * the file it downloads holds the demo's participants, and the last line printed is the one
 * README shows.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { tasks } from "@studyflow/db";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { cliEnvironment, repository, runShellBlock, shellBlockBelow } from "../doc-shell-block";
import { readDocument } from "./documents";

const run = promisify(execFile);
const HEADING = "### A bulk run from the CLI";
/** Where README's command writes the file (under var/, ignored by git). */
const OUT = path.join(repository, "var/demo/participants.json");
/** Enough to take more than one batch, few enough to seed in seconds. */
const PARTICIPANTS = 2_500;

describe("README: a bulk run from the CLI", () => {
  let t: TestApp;
  let worker: { stop: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  /** An earlier participants.json of the person running the tests, put back afterwards. */
  let setAside: string | undefined;
  /** var/demo, when this test made it (the tour's `npm run demo` does: it writes demo.json there). */
  let madeDirectory: string | undefined;

  beforeAll(async () => {
    t = await createTestApp();
    const scratch = await mkdtemp(path.join(tmpdir(), "sf-readme-tour-"));
    worker = startWorkerBesideApi(t, scratch);
    env = cliEnvironment(t, { queue: true });
    const seed = ["run", "-s", "cli", "--", "demo:seed", "--participants", String(PARTICIPANTS)];
    await run("npm", [...seed, "--out", path.join(scratch, "demo.json")], { cwd: repository, env });
    madeDirectory = await mkdir(path.dirname(OUT), { recursive: true });
    if (existsSync(OUT)) {
      setAside = path.join(scratch, "participants.json");
      await rename(OUT, setAside);
    }
  }, 120_000);
  afterAll(async () => {
    await rm(OUT, { force: true });
    if (setAside) await rename(setAside, OUT);
    if (madeDirectory) await rm(madeDirectory, { recursive: true, force: true });
    await worker?.stop();
    await t?.close();
  });

  it("exports the demo's participants through the workers, as README shows", { timeout: 180_000 }, async () => {
    const script = await shellBlockBelow("README.md", HEADING);
    expect(script).toMatch(/export:participants --study demo-study/);
    const { stdout } = await runShellBlock(script, env);

    const shown = /```text\n[^\n]*\n(exported \d+ participants to )[^\n]*(participants\.json)\n/.exec(
      readDocument("README.md").slice(readDocument("README.md").indexOf(HEADING)),
    );
    expect(shown, "README shows the line the command prints").not.toBeNull();
    const exported = /^exported (\d+) participants to (\S+)$/m.exec(stdout);
    expect(exported, stdout).not.toBeNull();
    expect(exported?.[2]).toBe(OUT);

    // The demo's participants (the seed also enters the demo user's profile), all in the file.
    const file = JSON.parse(await readFile(OUT, "utf8")) as { participants: { participantId: string }[] };
    expect(file.participants.length).toBe(Number(exported?.[1]));
    expect(file.participants.length).toBeGreaterThanOrEqual(PARTICIPANTS);

    const exports = await t.database.db.select().from(tasks).where(eq(tasks.studyKey, "demo-study"));
    expect(exports.map((task) => [task.kind, task.status, task.processedCount])).toEqual([
      ["export-participants", "completed", file.participants.length],
    ]);
  });
});
