import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ruleFailures } from "@studyflow/db";
import {
  bearer,
  call,
  exp,
  managementToken,
  onEvent,
  participantUser,
  postJson,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/** A study whose ENTER handler has one action that always fails (an optional question read by value). */
const rules = [
  onEvent(
    "ENTER",
    call("UPDATE_FLAG", str("entered"), str("yes")),
    call("UPDATE_FLAG", str("age"), exp(call("getResponseValueAsStr", str("intake.Q2"), str("rg.num")))),
    call("UPDATE_FLAG", str("group"), str("a")),
  ),
  onEvent("LEAVE", call("UPDATE_FLAG", str("exit"), exp(call("getResponseValueAsStr", str("exit.Q1"), str("rg"))))),
];

describe("rule failures: warnings on participant events, GET /v1/studies/{studyKey}/rule-failures, metric", () => {
  let t: TestApp;
  let reader: string;
  const list = (study: string, query = "", token = reader) =>
    t.app.request(`/v1/studies/${study}/rule-failures${query}`, { headers: bearer(token) });
  type Page = { ruleFailures: { id: string; eventType: string }[]; nextCursor: string | null };
  const page = async (query: string) => (await (await list("study-a", query)).json()) as Page;

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a", rules });
    await setupStudy(t, { key: "study-b" });
    ({ token: reader } = await researcher(t, "study-a", "read-rule-failures"));
  });
  afterAll(async () => {
    await t.close();
  });

  it("an event whose IFTHEN action fails succeeds, keeps the other actions and answers with warnings", async () => {
    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    const enter = await postJson(t, "/v1/study-service/events/study-a/enter", { profileID }, user.token);
    expect(enter.status).toBe(200);
    expect((await enter.json()).warnings).toEqual([
      {
        eventType: "ENTER",
        ruleIndex: 0,
        path: "rules[0].data[2].exp.data[1].exp",
        message: expect.stringContaining("UPDATE_FLAG"),
        outcome: "action-skipped",
      },
    ]);
    const leave = await postJson(t, "/v1/study-service/events/study-a/leave", { profileID }, user.token);
    expect(leave.status).toBe(200);
    expect((await leave.json()).warnings).toMatchObject([
      { eventType: "LEAVE", path: "rules[1].data[1].exp.data[1].exp" },
    ]);
  });

  it("lists the failures most recent first, filters them and pages with a cursor", async () => {
    const res = await list("study-a");
    expect(res.status).toBe(200);
    const body = (await res.json()) as Page;
    expect(body.ruleFailures.map((f) => f.eventType)).toEqual(["LEAVE", "ENTER"]);
    expect(body.ruleFailures[1]).toMatchObject({
      eventKey: "",
      rulesVersion: 1,
      taskId: null,
      ruleIndex: 0,
      path: "rules[0].data[2].exp.data[1].exp",
      outcome: "action-skipped",
    });
    expect(body.nextCursor).toBeNull();

    const enters = await (await list("study-a", "?eventType=ENTER")).json();
    expect(enters.ruleFailures).toHaveLength(1);
    const none = await (await list("study-a", "?participantId=someone-else")).json();
    expect(none.ruleFailures).toEqual([]);
    const future = await (await list("study-a", "?since=2999-01-01T00:00:00Z")).json();
    expect(future.ruleFailures).toEqual([]);

    const first = await page("?limit=1");
    expect(first.ruleFailures).toHaveLength(1);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await page(`?limit=1&cursor=${first.nextCursor}`);
    expect(second.ruleFailures.map((f) => f.id)).toEqual([body.ruleFailures[1]!.id]);
  });

  it("counts them in the API's metrics", async () => {
    const text = await (await t.app.request("/metrics")).text();
    expect(text).toMatch(/studyflow_rule_failures_total\{event_type="ENTER",outcome="action-skipped"\} 1/);
    expect(text).toMatch(/studyflow_rule_failures_total\{event_type="LEAVE",outcome="action-skipped"\} 1/);
  });

  it("400 for a bad filter or cursor, 404 for an unknown study", async () => {
    for (const query of [
      "?since=-271821-04-20T00:00:00.000Z",
      "?since=+010000-01-01T00:00:00Z",
      `?cursor=${Buffer.from("-271821-04-20T00:00:00.000Z|00000000-0000-1000-8000-000000000000").toString("base64url")}`,
      "?eventType=BOOM",
      "?limit=0",
      "?limit=501",
      "?since=yesterday",
      "?cursor=bm9wZQ",
      "?taskId=x",
    ]) {
      const res = await list("study-a", query);
      expect(res.status, query).toBe(400);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
    const admin = await managementToken(t, "root", true);
    const missing = await list("nope", "", admin);
    expect(missing.status).toBe(404);
  });

  it("401 without a token; 403 without read-rule-failures on that study", async () => {
    expect((await t.app.request("/v1/studies/study-a/rule-failures")).status).toBe(401);
    const { token: editor } = await researcher(t, "study-a", "edit-participant-data");
    expect((await list("study-a", "", editor)).status).toBe(403);
    expect((await list("study-b", "", reader)).status).toBe(403);
  });

  it("a strict study's rejected event is recorded too, though nothing else of it was", async () => {
    await setupStudy(t, { key: "study-strict", rules, settings: { strictRules: true } });
    const user = await participantUser(t);
    const res = await postJson(
      t,
      "/v1/study-service/events/study-strict/enter",
      { profileID: user.profiles[0]!.id },
      user.token,
    );
    expect(res.status).toBe(422);
    expect((await res.json()).error).toMatch(/study rules failed on ENTER \(rule 0 at rules\[0\]\.data\[2\]/);
    const recorded = (await t.database.db.select().from(ruleFailures)).filter((f) => f.studyKey === "study-strict");
    expect(recorded).toMatchObject([{ eventType: "ENTER", outcome: "event-rejected" }]);
    const participants = await t.database.sql`select 1 from participants where study_key = 'study-strict'`;
    expect(participants).toHaveLength(0);
  });
});
