import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tasks } from "@studyflow/db";
import { getStudyTimer } from "@studyflow/domain/timer";
import { onEvent } from "@studyflow/testkit";
import { loadConfig } from "../src/config";
import { call, createWorkerHarness, str, studyWithRules, type WorkerHarness } from "./worker-harness";

/**
 * The worker reads TIMER_INTERVAL_SECONDS and the task retention settings through the same
 * definitions as the API and the CLI (packages/config): the slot it ticks is the one they show.
 */
describe("the worker's timer and retention settings", () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await createWorkerHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it("reads the shared settings with their defaults, bounds and 'off'", () => {
    const defaults = loadConfig({});
    expect([defaults.TIMER_INTERVAL_SECONDS, defaults.TASK_RETENTION_DAYS, defaults.TIMER_TASK_RETENTION_DAYS]).toEqual(
      [3_600, 30, 7],
    );
    const set = loadConfig({
      TIMER_INTERVAL_SECONDS: "900",
      TASK_RETENTION_DAYS: "off",
      TIMER_TASK_RETENTION_DAYS: "0",
    });
    expect([set.TIMER_INTERVAL_SECONDS, set.TASK_RETENTION_DAYS, set.TIMER_TASK_RETENTION_DAYS]).toEqual([900, 0, 0]);
    for (const [name, value] of [
      ["TIMER_INTERVAL_SECONDS", "59"],
      ["TIMER_INTERVAL_SECONDS", "604801"],
      ["TASK_RETENTION_DAYS", "-1"],
      ["TASK_RETENTION_DAYS", "3651"],
      ["TIMER_TASK_RETENTION_DAYS", "2.5"],
      ["TIMER_TASK_RETENTION_DAYS", "never"],
      ["TASK_RETENTION_DAYS", ""],
    ] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name));
    }
  });

  it("schedules a study without its own interval on TIMER_INTERVAL_SECONDS, the slot getStudyTimer shows", async () => {
    const config = loadConfig({ TIMER_INTERVAL_SECONDS: "900" });
    await studyWithRules(h, "quarterly", [onEvent("TIMER", call("UPDATE_FLAG", str("t"), str("1")))]);
    const shown = await getStudyTimer(h.database.db, "quarterly", {
      now: Date.now(),
      defaultIntervalSeconds: config.TIMER_INTERVAL_SECONDS,
    });
    expect(shown).toMatchObject({ intervalSeconds: null, effectiveIntervalSeconds: 900, dueNow: true });
    h.start({ timer: { defaultIntervalSeconds: config.TIMER_INTERVAL_SECONDS, scanEveryMs: 200 } });
    const deadline = Date.now() + 15_000;
    let ticks: (typeof tasks.$inferSelect)[] = [];
    while (ticks.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ticks = await h.database.db
        .select()
        .from(tasks)
        .where(and(eq(tasks.studyKey, "quarterly"), eq(tasks.kind, "timer")));
    }
    expect(ticks).toHaveLength(1);
    expect(ticks[0]!.input).toMatchObject({ intervalSeconds: 900, defaultInterval: true });
    const dueAt = Date.parse((ticks[0]!.input as { dueAt: string }).dueAt);
    // the slot shown as due (unless a quarter of an hour began in between)
    expect([shown.nextTickAt?.getTime(), (shown.nextTickAt?.getTime() ?? 0) + 900_000]).toContain(dueAt);
  });
});
