import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tasks, type TimerTickInput } from "@studyflow/db";
import { encodePageCursor } from "@studyflow/domain/study-config";
import { TIMER_TASK_CREATOR } from "@studyflow/domain/tasks";
import { bearer, managementToken, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const list = (study: string, query = "") => `/v1/studies/${study}/run-actions/participants/tasks${query}`;

interface Listed {
  id: string;
  kind: string;
  createdBy: string;
  status: string;
  dryRun: boolean;
  startedAt: string | null;
  finishedAt: string | null;
  tick: { dueAt: string; rulesVersion: number } | null;
}

describe("GET /v1/studies/{studyKey}/run-actions/participants/tasks", () => {
  let t: TestApp;
  let owner: { subject: string; token: string };
  let colleague: { subject: string; token: string };
  let admin: string;
  const ids: Record<string, string> = {};

  const get = (url: string, token?: string) => t.app.request(url, { headers: token ? bearer(token) : {} });
  const page = async (url: string, token: string) => {
    const res = await get(url, token);
    expect(res.status, url).toBe(200);
    return (await res.json()) as { tasks: Listed[]; nextCursor: string | null };
  };
  /** Inserts a task row created `minutesAgo` before now (the list's order). */
  async function insertTask(
    name: string,
    studyKey: string,
    minutesAgo: number,
    values: Partial<typeof tasks.$inferInsert>,
  ) {
    const at = new Date(Date.now() - minutesAgo * 60_000);
    const [row] = await t.database.db
      .insert(tasks)
      .values({
        studyKey,
        kind: "run-actions",
        input: { rules: [], dryRun: false },
        createdBy: owner.subject,
        createdAt: at,
        updatedAt: at,
        ...values,
      })
      .returning();
    ids[name] = row!.id;
  }

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
    await setupStudy(t, { key: "study-b" });
    owner = await researcher(t, "study-a", "run-study-action");
    colleague = await researcher(t, "study-a", "run-study-action");
    admin = await managementToken(t, "root", true);
    const tick: TimerTickInput = {
      dueAt: "2026-03-01T10:00:00.000Z",
      rulesVersion: 2,
      intervalSeconds: 3_600,
      offsetSeconds: 0,
      defaultInterval: true,
    };
    const started = new Date(Date.now() - 50 * 60_000);
    await insertTask("ownDone", "study-a", 50, {
      status: "completed",
      targetCount: 10,
      processedCount: 10,
      startedAt: started,
      finishedAt: new Date(started.getTime() + 1_500),
    });
    await insertTask("tick", "study-a", 40, { kind: "timer", input: tick, createdBy: TIMER_TASK_CREATOR });
    await insertTask("theirs", "study-a", 30, { createdBy: colleague.subject });
    await insertTask("ownDry", "study-a", 20, { input: { rules: [], dryRun: true }, status: "in_progress" });
    await insertTask("otherStudy", "study-b", 10, {});
  });
  afterAll(async () => {
    await t.close();
  });

  it("lists the caller's run-actions and the study's timer ticks, newest first, with when they ran", async () => {
    const { tasks: listed, nextCursor } = await page(list("study-a"), owner.token);
    expect(listed.map((task) => task.id)).toEqual([ids.ownDry, ids.tick, ids.ownDone]);
    expect(nextCursor).toBeNull();
    const [dry, tick, done] = listed;
    expect(dry).toMatchObject({
      kind: "run-actions",
      status: "in_progress",
      dryRun: true,
      tick: null,
      finishedAt: null,
    });
    expect(tick).toMatchObject({
      kind: "timer",
      createdBy: "study-timer",
      dryRun: false,
      tick: { dueAt: "2026-03-01T10:00:00.000Z", rulesVersion: 2 },
    });
    expect(done).toMatchObject({ status: "completed", dryRun: false, processedCount: 10, targetCount: 10 });
    expect(Date.parse(done!.finishedAt!) - Date.parse(done!.startedAt!)).toBe(1_500);
  });

  it("shows every task of the study to an admin, each colleague only their own and the ticks", async () => {
    expect((await page(list("study-a"), admin)).tasks.map((task) => task.id)).toEqual([
      ids.ownDry,
      ids.theirs,
      ids.tick,
      ids.ownDone,
    ]);
    expect((await page(list("study-a"), colleague.token)).tasks.map((task) => task.id)).toEqual([ids.theirs, ids.tick]);
    expect((await page(list("study-b"), admin)).tasks.map((task) => task.id)).toEqual([ids.otherStudy]);
  });

  it("keeps one kind with ?kind=", async () => {
    expect((await page(list("study-a", "?kind=timer"), owner.token)).tasks.map((task) => task.id)).toEqual([ids.tick]);
    expect((await page(list("study-a", "?kind=run-actions"), owner.token)).tasks.map((task) => task.id)).toEqual([
      ids.ownDry,
      ids.ownDone,
    ]);
  });

  it("pages with limit and cursor, without skipping or repeating tasks created in the same instant", async () => {
    await setupStudy(t, { key: "busy" });
    const at = new Date("2026-01-01T00:00:00.123Z");
    const rows = await t.database.db
      .insert(tasks)
      .values(
        Array.from({ length: 7 }, () => ({
          studyKey: "busy",
          kind: "run-actions" as const,
          input: { rules: [], dryRun: false },
          createdBy: "root",
          createdAt: at,
        })),
      )
      .returning({ id: tasks.id });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const body = await page(list("busy", query), admin);
      expect(body.tasks.length).toBeLessThanOrEqual(3);
      seen.push(...body.tasks.map((task) => task.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect([...seen].sort()).toEqual(rows.map((row) => row.id).sort());
  });

  it("answers 400 for a bad limit, cursor or kind, 404 for an unknown study", async () => {
    const forged = encodePageCursor(["2026-01-01T00:00:00.000000Z", "not-a-uuid"]);
    for (const query of [
      "?limit=0",
      "?limit=1001",
      "?limit=x",
      "?cursor=nonsense",
      `?cursor=${forged}`,
      "?kind=tick",
    ]) {
      const res = await get(list("study-a", query), owner.token);
      expect(res.status, query).toBe(400);
      expect(Object.keys(await res.json()), query).toEqual(["error"]);
    }
    const res = await get(list("nope"), admin);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'study "nope" not found' });
  });

  it("needs a management credential with run-study-action on the study", async () => {
    expect((await get(list("study-a"))).status).toBe(401);
    const editor = await researcher(t, "study-a", "edit-participant-data");
    const refused = await get(list("study-a"), editor.token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'missing permission "run-study-action" for study "study-a"' });
    expect((await get(list("study-b"), owner.token)).status).toBe(403);
    // a stranger learns nothing about which studies exist
    expect((await get(list("nope"), owner.token)).status).toBe(403);
  });

  it("lists the same tasks the task route opens", async () => {
    const { tasks: listed } = await page(list("study-a"), colleague.token);
    for (const task of listed) {
      const res = await get(`/v1/studies/study-a/run-actions/participants/task/${task.id}`, colleague.token);
      expect(res.status, task.id).toBe(200);
    }
    const [hidden] = await t.database.db.select().from(tasks).where(eq(tasks.id, ids.ownDone!));
    const res = await get(`/v1/studies/study-a/run-actions/participants/task/${hidden!.id}`, colleague.token);
    expect(res.status).toBe(403);
  });
});
