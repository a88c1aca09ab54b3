// The console's pages and the CLI say a task's status in the same words: the console's
// task-status.js is served from the domain's table that the CLI prints from.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TASK_STATUSES } from "@studyflow/db";
import { TERMINAL_STATUSES, taskStatusWord } from "@studyflow/domain/tasks";
import { createTestApp, type TestApp } from "./test-app";

interface TaskStatusModule {
  TERMINAL_STATUSES: ReadonlySet<string>;
  taskStatusWord: (status: string) => string;
}

describe("console task-status module", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function served(): Promise<{ res: Response; source: string; module: TaskStatusModule }> {
    const res = await t.app.request("/console/assets/task-status.js");
    const source = await res.text();
    const module = (await import(`data:text/javascript,${encodeURIComponent(source)}`)) as TaskStatusModule;
    return { res, source, module };
  }

  it("is served as a checked JavaScript module under the console's policy", async () => {
    const { res, source, module } = await served();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(source.startsWith("// @ts-check\n")).toBe(true);
    // what assets/task-status.d.ts declares for the pages' type check, and nothing else
    expect(Object.keys(module).sort()).toEqual(["TERMINAL_STATUSES", "taskStatusWord"]);
  });

  it("says every status as the domain's table (and so the CLI) does", async () => {
    const { module } = await served();
    for (const status of TASK_STATUSES) expect(module.taskStatusWord(status), status).toBe(taskStatusWord(status));
    expect(TASK_STATUSES.map((status) => module.taskStatusWord(status))).toEqual([
      "queued",
      "running",
      "completed",
      "failed",
      "canceled",
      "skipped",
    ]);
    expect(module.taskStatusWord("paused")).toBe("paused");
    expect(module.taskStatusWord("constructor")).toBe("constructor");
    expect([...module.TERMINAL_STATUSES].sort()).toEqual([...TERMINAL_STATUSES].sort());
  });
});
