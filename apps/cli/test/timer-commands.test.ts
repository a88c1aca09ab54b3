import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyTimers } from "@studyflow/db";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { call, createTestDatabase, onEvent, str, type TestDatabase } from "@studyflow/testkit";
import { runCommandLine } from "./run-command-line";
import { runWithSettings } from "./run-with-settings";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await createStudy(database.db, { key: "flu-watch" });
  await setStudyRules(
    database.db,
    "flu-watch",
    [onEvent("TIMER", call("REMOVE_SURVEYS_BY_KEY", str("weekly")))],
    "test",
  );
  await createStudy(database.db, { key: "no-timer" });
});
afterAll(async () => {
  await database.drop();
});

const run = (argv: string[]) => runCommandLine(database, argv);

async function json<T = Record<string, any>>(argv: string[]): Promise<T> {
  const result = await run([...argv, "--json"]);
  expect(result.stderr, argv.join(" ")).toBe("");
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout) as T;
}

describe("timer commands", () => {
  it("timer:show prints the default schedule, for people and as JSON", async () => {
    const shown = await json(["timer:show", "--study", "flu-watch"]);
    expect(shown.timer).toMatchObject({
      studyKey: "flu-watch",
      intervalSeconds: null,
      offsetSeconds: 0,
      paused: false,
      effectiveIntervalSeconds: 3_600,
      defaultIntervalSeconds: 3_600,
      handlesTimer: true,
      studyActive: true,
      lastTick: null,
      updatedBy: null,
    });
    expect(Date.parse(shown.timer.nextTickAt) % 3_600_000).toBe(0);
    expect(shown.timer.dueNow).toBe(true);

    const text = await run(["timer:show", "--study", "flu-watch"]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/^timer of study "flu-watch"\n/);
    expect(text.stdout).toMatch(/interval +default \(3600 s \(1 h\), TIMER_INTERVAL_SECONDS\)/);
    expect(text.stdout).toMatch(/next tick +due now: its slot began .*; the timer starts it within a minute/);
    expect(text.stdout).toMatch(/last tick +none yet/);
    const idle = await run(["timer:show", "--study", "no-timer"]);
    expect(idle.stdout).toMatch(/next tick +none: the study's rules do not handle TIMER/);
  });

  it("timer:set, timer:pause and timer:resume change the timer and audit each change", async () => {
    const set = await json(["timer:set", "--study", "flu-watch", "--interval", "86400", "--offset", "7200"]);
    expect(set.timer).toMatchObject({ intervalSeconds: 86_400, offsetSeconds: 7_200, updatedBy: "operator-cli" });
    const nextTick = new Date(set.timer.nextTickAt);
    expect(nextTick.getUTCHours()).toBe(2);

    const paused = await json(["timer:pause", "--study", "flu-watch"]);
    expect(paused.timer).toMatchObject({ paused: true, nextTickAt: null });
    expect((await run(["timer:show", "--study", "flu-watch"])).stdout).toMatch(/next tick +none: paused/);
    expect((await json(["timer:resume", "--study", "flu-watch"])).timer).toMatchObject({ paused: false });
    const reset = await json(["timer:set", "--study", "flu-watch", "--interval", "default", "--offset", "0"]);
    expect(reset.timer).toMatchObject({ intervalSeconds: null, offsetSeconds: 0 });

    const [row] = await database.db.select().from(studyTimers).where(eq(studyTimers.studyKey, "flu-watch"));
    expect(row).toMatchObject({ intervalSeconds: null, offsetSeconds: 0, paused: false, updatedBy: "operator-cli" });
    const audit = await database.db
      .select({ action: auditLog.action, details: auditLog.details })
      .from(auditLog)
      .where(eq(auditLog.studyKey, "flu-watch"))
      .orderBy(auditLog.id);
    expect(audit.filter((entry) => entry.action.startsWith("timer."))).toEqual([
      {
        action: "timer.schedule.update",
        details: { intervalSeconds: { from: null, to: 86_400 }, offsetSeconds: { from: 0, to: 7_200 } },
      },
      { action: "timer.pause", details: {} },
      { action: "timer.resume", details: {} },
      {
        action: "timer.schedule.update",
        details: { intervalSeconds: { from: 86_400, to: null }, offsetSeconds: { from: 7_200, to: 0 } },
      },
    ]);
  });

  it("refuses bad input with exit code 1 and one error line, changing nothing", async () => {
    const before = await database.db.select().from(studyTimers);
    const cases: [string[], RegExp][] = [
      [["timer:set", "--study", "flu-watch"], /give --interval, --offset or both/],
      [
        ["timer:set", "--study", "flu-watch", "--interval", "59"],
        /--interval must be a whole number from 60 to 604800, or "default"/,
      ],
      [["timer:set", "--study", "flu-watch", "--interval", "1h"], /--interval must be a whole number/],
      [["timer:set", "--study", "flu-watch", "--offset", "-5"], /--offset/],
      [["timer:set", "--study", "flu-watch", "--interval", "600", "--offset", "600"], /must be less than the interval/],
      [["timer:set", "--study", "nope", "--interval", "600"], /study "nope" not found/],
      [["timer:pause", "--study", "nope"], /study "nope" not found/],
      [["timer:show", "--study", "nope"], /study "nope" not found/],
      [["timer:pause"], /--study/],
    ];
    for (const [argv, message] of cases) {
      const result = await run([...argv, "--json"]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect(JSON.parse(result.stderr).error, argv.join(" ")).toMatch(message);
      expect(result.stdout, argv.join(" ")).toBe("");
    }
    expect(await database.db.select().from(studyTimers)).toEqual(before);
  });
});

describe("the default interval is TIMER_INTERVAL_SECONDS, read as the workers read it", () => {
  it("a study without its own interval shows 900 with TIMER_INTERVAL_SECONDS=900; its own interval wins", async () => {
    await createStudy(database.db, { key: "quarterly" });
    await setStudyRules(database.db, "quarterly", [onEvent("TIMER", call("REMOVE_SURVEYS_BY_KEY", str("w")))], "test");
    const env = { TIMER_INTERVAL_SECONDS: "900" };
    const shown = await runWithSettings(database, ["timer:show", "--study", "quarterly", "--json"], env);
    expect(shown.exitCode).toBe(0);
    expect(JSON.parse(shown.stdout).timer).toMatchObject({
      intervalSeconds: null,
      effectiveIntervalSeconds: 900,
      defaultIntervalSeconds: 900,
    });
    expect(Date.parse(JSON.parse(shown.stdout).timer.nextTickAt) % 900_000).toBe(0);
    const text = await runWithSettings(database, ["timer:show", "--study", "quarterly"], env);
    expect(text.stdout).toMatch(/interval +default \(900 s \(15 min\), TIMER_INTERVAL_SECONDS\)/);

    const own = await runWithSettings(
      database,
      ["timer:set", "--study", "quarterly", "--interval", "7200", "--json"],
      env,
    );
    expect(JSON.parse(own.stdout).timer).toMatchObject({
      intervalSeconds: 7_200,
      effectiveIntervalSeconds: 7_200,
      defaultIntervalSeconds: 900,
    });
    const bad = await runWithSettings(database, ["timer:show", "--study", "quarterly"], {
      TIMER_INTERVAL_SECONDS: "30",
    }).catch((error: unknown) => error);
    expect(String(bad)).toMatch(/TIMER_INTERVAL_SECONDS/);
  });
});
