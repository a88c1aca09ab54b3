import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, tasks } from "@studyflow/db";
import {
  bearer,
  call,
  exp,
  insertParticipant,
  managementToken,
  onEvent,
  postJson,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/** The two routes the console adds to the API besides the task list: rule checks and participant counts. */
describe("POST /v1/studies/{studyKey}/run-actions/validate", () => {
  let t: TestApp;
  let runner: { subject: string; token: string };
  const validate = (study: string, body: unknown, token?: string) =>
    postJson(t, `/v1/studies/${study}/run-actions/validate`, body, token);
  const start = (study: string, rules: unknown, token: string) =>
    postJson(t, `/v1/studies/${study}/run-actions/participants/`, { rules, dryRun: true }, token);

  const valid = [onEvent("CUSTOM", call("UPDATE_FLAG", str("seen"), str("yes")))];
  const invalid = [
    valid[0],
    { name: "IFTHEN", data: [{ dtype: "exp", exp: { name: "hasStudyStatuss", data: [] } }] },
    { name: "UPDATE_FLAG", data: [{ dtype: "str", str: "only-one" }] },
    { data: [] },
  ];

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
    runner = await researcher(t, "study-a", "run-study-action");
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers valid for rules a run accepts, and writes nothing", async () => {
    const before = await t.database.db.select().from(tasks);
    const res = await validate("study-a", { rules: valid }, runner.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ valid: true, issues: [], issueCount: 0 });
    expect(await t.database.db.select().from(tasks)).toEqual(before);
  });

  it("lists every problem with its JSON path, as the run would refuse them", async () => {
    const res = await validate("study-a", { rules: invalid }, runner.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      valid: false,
      issueCount: 3,
      issues: [
        { path: "rules[1].data[0].exp.name", message: 'unknown expression "hasStudyStatuss"' },
        { path: "rules[2].data", message: "UPDATE_FLAG takes exactly 2 arguments, got 1" },
        { path: "rules[3].name", message: "is missing" },
      ],
    });
    const refused = await start("study-a", [valid[0], invalid[1]], runner.token);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toContain('rules[1].data[0].exp.name: unknown expression "hasStudyStatuss"');
  });

  it("agrees with the run on what is valid", async () => {
    const samples: unknown[][] = [
      valid,
      [],
      [
        {
          name: "UPDATE_FLAG",
          data: [
            { dtype: "str", str: "a" },
            { dtype: "exp", exp: { name: "timestampWithOffset" } },
          ],
        },
      ],
      [call("IF", exp(call("checkEventType", str("CUSTOM"))), exp(call("REMOVE_FLAG", str("x"))))],
      [call("checkEventType", str("CUSTOM"))],
    ];
    const outcomes: boolean[] = [];
    for (const rules of samples) {
      const checked = (await (await validate("study-a", { rules }, runner.token)).json()).valid as boolean;
      const run = await start("study-a", rules, runner.token);
      expect(run.status, JSON.stringify(rules)).toBe(checked ? 200 : 400);
      outcomes.push(checked);
    }
    expect(outcomes).toEqual([true, true, false, true, false]);
  });

  it("lists at most 100 problems and counts them all", async () => {
    const rules = Array.from({ length: 150 }, () => ({ name: "NO_SUCH_ACTION" }));
    const body = await (await validate("study-a", { rules }, runner.token)).json();
    expect(body.valid).toBe(false);
    expect(body.issues).toHaveLength(100);
    expect(body.issueCount).toBe(150);
  });

  it("answers 400 to a body without a rules array, 404 for an unknown study", async () => {
    for (const body of [{}, { rules: {} }, { rules: "[]" }, { rules: Array.from({ length: 1_001 }, () => valid[0]) }]) {
      const res = await validate("study-a", body, runner.token);
      expect(res.status).toBe(400);
      expect(Object.keys(await res.json())).toEqual(["error"]);
    }
    const admin = await managementToken(t, "root", true);
    const res = await validate("nope", { rules: valid }, admin);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'study "nope" not found' });
  });

  it("needs run-study-action on the study", async () => {
    expect((await validate("study-a", { rules: valid })).status).toBe(401);
    const editor = await researcher(t, "study-a", "edit-participant-data");
    const res = await validate("study-a", { rules: valid }, editor.token);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'missing permission "run-study-action" for study "study-a"' });
    expect((await validate("nope", { rules: valid }, runner.token)).status).toBe(403);
  });
});

describe("GET /v1/studies/{studyKey}/participant-counts", () => {
  let t: TestApp;
  const counts = (study: string, token?: string) =>
    t.app.request(`/v1/studies/${study}/participant-counts`, { headers: token ? bearer(token) : {} });

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
    await setupStudy(t, { key: "study-b" });
    const statuses = ["active", "active", "active", "exited", "temporary", "accountDeleted"];
    for (const [index, studyStatus] of statuses.entries()) {
      await insertParticipant(t.database.db, { studyKey: "study-a", participantId: `p${index}`, studyStatus });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it("counts a study's participants by status, leaving out statuses nobody has any more", async () => {
    const { token } = await researcher(t, "study-a", "read-rule-failures");
    const res = await counts("study-a", token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      participantCounts: { byStatus: { active: 3, exited: 1, temporary: 1, accountDeleted: 1 }, total: 6 },
    });
    await t.database.db.delete(participants).where(eq(participants.studyStatus, "exited"));
    expect((await (await counts("study-a", token)).json()).participantCounts).toEqual({
      byStatus: { active: 3, temporary: 1, accountDeleted: 1 },
      total: 5,
    });
    const admin = await managementToken(t, "root", true);
    expect((await (await counts("study-b", admin)).json()).participantCounts).toEqual({ byStatus: {}, total: 0 });
  });

  it("needs any permission for the study; 404 for an unknown study", async () => {
    expect((await counts("study-a")).status).toBe(401);
    const other = await researcher(t, "study-b", "run-study-action");
    const refused = await counts("study-a", other.token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'no permission for study "study-a"' });
    expect((await counts("nope", other.token)).status).toBe(403);
    const admin = await managementToken(t, "root", true);
    const missing = await counts("nope", admin);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
  });
});
