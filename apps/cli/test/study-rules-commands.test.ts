import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ruleFailures, studies } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await createStudy(database.db, { key: "s" });
});
afterAll(async () => {
  await database.drop();
});

/** Runs a command line as the entry does; returns stdout, stderr, and the exit code it would have. */
const run = (argv: string[]) => runCommandLine(database, argv);

const configOf = async () => (await database.db.select().from(studies).where(eq(studies.key, "s")))[0]?.config;

describe("study:configure", () => {
  it("switches strict rules on and sets the time zone, keeping what it is not given", async () => {
    const on = await run(["study:configure", "--key", "s", "--strict-rules", "on", "--json"]);
    expect(on.exitCode).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({
      studyKey: "s",
      settings: { strictRules: true, timeZone: "UTC", unknownSurveyVersion: "record" },
    });
    const zone = await run(["study:configure", "--key", "s", "--time-zone", "Europe/Amsterdam"]);
    expect(zone.stdout).toMatch(/strict rules\s+on .*\ntime zone\s+Europe\/Amsterdam/);
    expect(await configOf()).toEqual({ strictRules: true, timeZone: "Europe/Amsterdam" });
    await run(["study:configure", "--key", "s", "--strict-rules", "off"]);
    expect(await configOf()).toEqual({ strictRules: false, timeZone: "Europe/Amsterdam" });
    const versions = await run(["study:configure", "--key", "s", "--unknown-survey-version", "reject"]);
    expect(versions.stdout).toMatch(/unknown survey versions\s+reject/);
    expect(await configOf()).toEqual({
      strictRules: false,
      timeZone: "Europe/Amsterdam",
      unknownSurveyVersion: "reject",
    });
  });

  it("refuses an unknown zone, a bad switch, an unknown study and a call without settings (exit 1), changing nothing", async () => {
    const before = await configOf();
    const cases: [string[], RegExp][] = [
      [["--key", "s", "--time-zone", "Mars/Olympus"], /unknown time zone "Mars\/Olympus"/],
      [["--key", "s", "--time-zone", "+01:00"], /unknown time zone "\+01:00"/],
      [["--key", "s", "--strict-rules", "maybe"], /--strict-rules must be one of on, off/],
      [["--key", "nope", "--strict-rules", "on"], /no study "nope"/],
      [["--key", "s", "--unknown-survey-version", "ignore"], /--unknown-survey-version must be one of reject, record/],
      [["--key", "s"], /give at least one of --strict-rules, --time-zone, --unknown-survey-version/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(["study:configure", ...argv, "--json"]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect(JSON.parse(result.stderr).error).toMatch(message);
      expect(result.stdout).toBe("");
    }
    expect(await configOf()).toEqual(before);
  });
});

describe("rule-failures:list", () => {
  beforeAll(async () => {
    const base = { studyKey: "s", rulesVersion: 3, ruleIndex: 1, path: "rules[1].data[2].exp", message: "boom" };
    await database.db.insert(ruleFailures).values([
      {
        ...base,
        participantId: "p1",
        eventType: "SUBMIT",
        eventKey: "intake",
        outcome: "rule-skipped",
        occurredAt: new Date("2026-11-01T10:00:00Z"),
      },
      {
        ...base,
        participantId: "p2",
        eventType: "ENTER",
        outcome: "action-skipped",
        occurredAt: new Date("2026-11-02T10:00:00Z"),
      },
      {
        ...base,
        participantId: "p1",
        eventType: "SUBMIT",
        eventKey: "weekly",
        outcome: "rule-skipped",
        occurredAt: new Date("2026-11-03T10:00:00Z"),
      },
    ]);
  });

  it("lists most recent first, filters by participant, event type and time, and limits", async () => {
    const all = JSON.parse((await run(["rule-failures:list", "--study", "s", "--json"])).stdout) as {
      ruleFailures: { eventKey: string }[];
    };
    expect(all.ruleFailures.map((f) => f.eventKey)).toEqual(["weekly", "", "intake"]);
    expect(all.ruleFailures[0]).toMatchObject({
      participantId: "p1",
      rulesVersion: 3,
      path: "rules[1].data[2].exp",
      message: "boom",
    });

    const p1Submits = JSON.parse(
      (await run(["rule-failures:list", "--study", "s", "--participant", "p1", "--event-type", "SUBMIT", "--json"]))
        .stdout,
    );
    expect(p1Submits.ruleFailures).toHaveLength(2);
    const recent = JSON.parse(
      (await run(["rule-failures:list", "--study", "s", "--since", "2026-11-02T00:00:00Z", "--json"])).stdout,
    );
    expect(recent.ruleFailures).toHaveLength(2);
    const one = JSON.parse((await run(["rule-failures:list", "--study", "s", "--limit", "1", "--json"])).stdout);
    expect(one.ruleFailures).toHaveLength(1);

    const text = await run(["rule-failures:list", "--study", "s", "--limit", "1"]);
    expect(text.stdout).toBe(
      '1 rule failure in study "s" (most recent first)\n2026-11-03T10:00:00.000Z  SUBMIT(weekly)  p1  rule-skipped  rules[1].data[2].exp: boom\n',
    );
  });

  it("exit 1 for a bad event type, date or limit, and for an unknown study", async () => {
    for (const argv of [
      ["--study", "s", "--event-type", "BOOM"],
      ["--study", "s", "--since", "yesterday"],
      ["--study", "s", "--limit", "0"],
      ["--study", "nope"],
    ]) {
      const result = await run(["rule-failures:list", ...argv]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect(result.stderr).toMatch(/^error: /);
    }
  });
});
