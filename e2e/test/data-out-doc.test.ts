/**
 * docs/data-out.md's walkthrough, run as it stands: its shell block, with bash, against the API
 * served on a free port and an in-process worker on the same database and queue prefix (the
 * export is a real task the worker writes), the CLI through `npm run cli` as an operator types it.
 * What it prints and the exported file are checked, so the page cannot drift from the product.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { surveyResponses, tasks } from "@studyflow/db";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { cliEnvironment, runShellBlock, serveTestApp, shellBlockBelow, type ServedTestApp } from "./doc-shell-block";

const HEADING = "## Walkthrough";

describe("docs/data-out.md: the walkthrough", () => {
  let api: ServedTestApp;
  let worker: { stop: () => Promise<void> };

  beforeAll(async () => {
    api = await serveTestApp();
    worker = startWorkerBesideApi(api.t, await mkdtemp(path.join(tmpdir(), "sf-data-out-doc-")));
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  it("sets up, exports, lists and pages as the page says", { timeout: 300_000 }, async () => {
    const script = await shellBlockBelow("docs/data-out.md", HEADING);
    const { stdout } = await runShellBlock(script, { ...cliEnvironment(api.t, { queue: true }), API: api.url });
    const lines = stdout.split("\n");

    // the export: the CLI's summary, and the file it names
    const exported = /^exported 3 responses to (\S+\/sleep\.csv)$/m.exec(stdout);
    expect(exported, stdout).not.toBeNull();
    const file = (await readFile(exported?.[1] ?? "", "utf8")).trimEnd().split("\n");
    expect(file).toHaveLength(4);
    const header = file[0] ?? "";
    expect(header).toMatch(/^ID,participantID,version,opened,submitted,arrived,/);
    expect(header.endsWith("sleep.Q1")).toBe(true);
    expect(header).not.toContain("accountID"); // the study does not track accounts
    expect(lines).toContain(header); // what `head -n 1` printed is the file's header
    expect(file.slice(1).map((row) => row.split(",")[1])).toEqual(
      expect.arrayContaining(["sd-000000000", "sd-000000001", "sd-000000002"]),
    );
    for (const row of file.slice(1)) expect(row.endsWith(",good")).toBe(true);

    // the participants: five, all active
    expect(stdout).toMatch(/^5 participants in study "sleep-diary"; page 1 of 1$/m);
    expect(lines.filter((line) => /^sd-00000000\d {2}active {2}/.test(line))).toHaveLength(5);

    // the explorer page: two of three responses
    const page = lines.find((line) => line.startsWith('{"ids":'));
    expect(page, stdout).toBeDefined();
    const parsed = JSON.parse(page ?? "{}") as { ids: string[]; pagination: Record<string, number> };
    expect(parsed.ids).toHaveLength(2);
    expect(parsed.pagination).toEqual({ totalCount: 3, currentPage: 1, totalPages: 2, pageSize: 2 });

    // and the database: three responses, one completed export task written by the worker
    const db = api.t.database.db;
    expect(await db.select().from(surveyResponses).where(eq(surveyResponses.studyKey, "sleep-diary"))).toHaveLength(3);
    const exports = await db.select().from(tasks).where(eq(tasks.studyKey, "sleep-diary"));
    expect(exports.map((task) => [task.kind, task.status, task.targetCount, task.processedCount])).toEqual([
      ["export-responses", "completed", 3, 3],
    ]);
  });
});
