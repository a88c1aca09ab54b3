import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, reports, surveyResponses } from "@studyflow/db";
import { recordRuleFailures } from "@studyflow/domain/events";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runCommandLine } from "./run-command-line";

const STUDY = "grippenet-2026";
const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z
const PAT = "a1f3c9e07b2d4e58";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  const db = database.db;
  await createStudy(db, { key: STUDY });
  await createStudy(db, { key: "empty-study" });
  await db.insert(participants).values([
    {
      studyKey: STUDY,
      participantId: PAT,
      studyStatus: "active",
      enteredAt: T0,
      modifiedAt: T0 + 86_400,
      flags: { consent: "yes", ageGroup: "35-44" },
      assignedSurveys: [{ surveyKey: "weekly", category: "normal", validFrom: T0, validUntil: 0 }],
      lastSubmissions: { intake: T0 + 600, weekly: T0 + 86_400 },
    },
    {
      studyKey: STUDY,
      participantId: "a1f3d2",
      studyStatus: "active",
      enteredAt: T0 + 10,
      modifiedAt: T0 + 10,
      flags: { consent: "yes" },
    },
    {
      studyKey: STUDY,
      participantId: "b7e210",
      studyStatus: "exited",
      enteredAt: T0 + 20,
      modifiedAt: T0 + 20,
      flags: {},
    },
    {
      studyKey: STUDY,
      participantId: "c0ffee",
      studyStatus: "active",
      enteredAt: T0 + 30,
      modifiedAt: T0 + 30,
      flags: { consent: "no" },
    },
  ]);
  await db.insert(surveyResponses).values([
    { studyKey: STUDY, participantId: PAT, key: "intake", versionId: "v1", submittedAt: T0 + 600, arrivedAt: T0 + 601 },
    {
      studyKey: STUDY,
      participantId: PAT,
      key: "weekly",
      versionId: "v3",
      submittedAt: T0 + 86_400,
      arrivedAt: T0 + 86_401,
    },
    {
      studyKey: STUDY,
      participantId: "c0ffee",
      key: "weekly",
      versionId: "v3",
      submittedAt: T0 + 5,
      arrivedAt: T0 + 5,
    },
  ]);
  await db.insert(reports).values({
    studyKey: STUDY,
    participantId: PAT,
    key: "symptomsReport",
    eventType: "SUBMIT",
    timestamp: T0 + 86_400,
    data: [{ key: "fever", value: "yes" }],
  });
  await recordRuleFailures(
    db,
    [
      {
        studyKey: STUDY,
        participantId: PAT,
        eventType: "SUBMIT",
        eventKey: "weekly",
        rulesVersion: 1,
        ruleIndex: 2,
        path: "rules[2].data[0]",
        message: "no response item intake.Q2",
        outcome: "rule-skipped",
      },
    ],
    new Date((T0 + 86_400) * 1000),
  );
});
afterAll(async () => {
  await database.drop();
});

const run = (argv: string[]) => runCommandLine(database, argv);
const idsOf = (answer: Record<string, any>) =>
  (answer.participants as { participantId: string }[]).map((participant) => participant.participantId);

async function json<T = Record<string, any>>(argv: string[]): Promise<T> {
  const result = await run([...argv, "--json"]);
  expect(result.stderr, argv.join(" ")).toBe("");
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout) as T;
}

describe("participants commands", () => {
  it("participants:list pages, filters and sorts as the data explorer does", async () => {
    const all = await json(["participants:list", "--study", STUDY, "--limit", "3"]);
    expect(all.pagination).toEqual({ totalCount: 4, currentPage: 1, totalPages: 2, pageSize: 3 });
    expect(idsOf(all)).toEqual([PAT, "a1f3d2", "b7e210"]);
    const second = await json(["participants:list", "--study", STUDY, "--limit", "3", "--page", "2"]);
    expect(idsOf(second)).toEqual(["c0ffee"]);

    const consenting = await json([
      "participants:list",
      "--study",
      STUDY,
      "--filter",
      '{"studyStatus": "active", "flags.consent": "yes"}',
      "--sort",
      '{"enteredAt": -1}',
    ]);
    expect(idsOf(consenting)).toEqual(["a1f3d2", PAT]);
    expect(consenting.participants[1]).toMatchObject({
      studyStatus: "active",
      flags: { consent: "yes", ageGroup: "35-44" },
      assignedSurveys: ["weekly"],
    });

    const text = await run(["participants:list", "--study", STUDY, "--filter", '{"studyStatus": "exited"}']);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toBe(
      `1 participant in study "${STUDY}" match the filter; page 1 of 1\nb7e210  exited  2026-01-01T00:00:20.000Z  -\n`,
    );
    const empty = await run(["participants:list", "--study", "empty-study"]);
    expect(empty.stdout).toBe('0 participants in study "empty-study"; page 1 of 1\n');
  });

  it("participants:show prints state, surveys, submissions, responses, reports and rule failures", async () => {
    const shown = await json(["participants:show", "--study", STUDY, "--participant", PAT]);
    expect(shown.participant).toMatchObject({
      participantId: PAT,
      studyStatus: "active",
      flags: { consent: "yes", ageGroup: "35-44" },
      lastSubmissions: { intake: T0 + 600, weekly: T0 + 86_400 },
    });
    expect((shown.responses as { surveyKey: string }[]).map((response) => response.surveyKey)).toEqual([
      "weekly",
      "intake",
    ]);
    expect(shown.reports).toEqual([
      expect.objectContaining({ key: "symptomsReport", data: [{ key: "fever", value: "yes" }] }),
    ]);
    expect(shown.ruleFailures).toEqual([
      expect.objectContaining({ eventType: "SUBMIT", ruleIndex: 2, message: "no response item intake.Q2" }),
    ]);

    const text = await run(["participants:show", "--study", STUDY, "--participant", PAT, "--recent", "1"]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(`participant "${PAT}" of study "${STUDY}"`);
    expect(text.stdout).toMatch(/status +active/);
    expect(text.stdout).toContain("  weekly  from 2026-01-01T00:00:00.000Z  until open");
    expect(text.stdout).toContain("recent responses (at most 1)\n  2026-01-02T00:00:00.000Z  weekly  version v3");
    expect(text.stdout).not.toContain("intake  version v1");
    expect(text.stdout).toContain("rule 2  rules[2].data[0]: no response item intake.Q2");
  });

  it("refuses bad input with exit code 1 and one error line", async () => {
    const cases: [string[], RegExp][] = [
      [["participants:list", "--study", "nope"], /no study "nope"/],
      [["participants:list", "--study", STUDY, "--filter", "{status: active}"], /--filter must be a JSON object/],
      [["participants:list", "--study", STUDY, "--filter", "[1]"], /--filter must be a JSON object, got an array/],
      [["participants:list", "--study", STUDY, "--filter", '{"nickname": "x"}'], /nickname/],
      [["participants:list", "--study", STUDY, "--filter", '{"studyStatus": {"$regex": "a"}}'], /\$regex/],
      [["participants:list", "--study", STUDY, "--sort", '{"flags": 1}'], /cannot sort on "flags"/],
      [["participants:list", "--study", STUDY, "--page", "0"], /--page must be a whole number from 1/],
      [["participants:show", "--study", STUDY, "--participant", "nobody"], /no participant "nobody"/],
      [["participants:show", "--study", STUDY], /--participant/],
    ];
    for (const [argv, message] of cases) {
      for (const mode of ["json", "text"] as const) {
        const result = await run(mode === "json" ? [...argv, "--json"] : argv);
        expect(result.exitCode, argv.join(" ")).toBe(1);
        expect(result.stdout, argv.join(" ")).toBe("");
        const line = mode === "json" ? (JSON.parse(result.stderr) as { error: string }).error : result.stderr;
        expect(line, argv.join(" ")).toMatch(message);
        expect(result.stderr.trim().split("\n"), argv.join(" ")).toHaveLength(1);
      }
    }
  });
});
