import { and, eq } from "drizzle-orm";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { auditLog, reports, ruleFailures, surveyResponses, tasks } from "@studyflow/db";
import {
  call,
  exp,
  insertParticipant,
  managementToken,
  onEvent,
  readParticipant,
  researcher,
  setupStudy,
  str,
} from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall } from "./replay";

const setFlag = (key: string, value: string) => call("UPDATE_FLAG", str(key), str(value));
const customRules = [onEvent("CUSTOM", setFlag("seen", "yes"))];
/** Fails at run time for a participant without a numeric "score" flag. */
const failingRule = call(
  "UPDATE_FLAG",
  str("parsed"),
  exp(call("parseValueAsNum", exp(call("getParticipantFlagValue", str("score"))))),
);

describe("case-admin run actions (replayed as case-admin sends them)", () => {
  let t: TestApp;
  let admin: string;
  let runner: { subject: string; token: string };
  let editor: { subject: string; token: string };

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    admin = await managementToken(t, "root", true);
    runner = await researcher(t, "flu", "run-study-action");
    editor = await researcher(t, "flu", "edit-participant-data");
    for (const [participantId, studyStatus] of [
      ["p1", "active"],
      ["p2", "active"],
      ["tmp", "temporary"],
      ["gone", "accountDeleted"],
    ] as const) {
      await insertParticipant(t.database.db, { studyKey: "flu", participantId, studyStatus });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const audits = (action: string) => t.database.db.select().from(auditLog).where(eq(auditLog.action, action));

  describe("runStudyActionForAllParticipants: POST …/run-actions/participants", () => {
    const all = caseAdminCall("runStudyActionForAllParticipants");

    it("200 {task} for a text/plain body; case-admin reads task.id", async () => {
      const answer = await replayCaseAdminCall(t, all, {
        params: { studyKey: "flu" },
        body: { rules: customRules },
        token: runner.token,
      });
      expect(answer.status).toBe(200);
      expect(answer.failed).toBe(false);
      expect(answer.body.task).toMatchObject({ status: "queued", createdBy: runner.subject, targetCount: 2 });
      const job = await t.deps.taskQueue.getJob(answer.body.task.id as string);
      expect(job?.data).toEqual({ kind: "task", taskId: answer.body.task.id });
    });

    it("the slashed path and case-insensitive keys work too; dryRun is still taken", async () => {
      const res = await t.app.request("/v1/studies/flu/run-actions/participants/", {
        method: "POST",
        headers: { "content-type": "text/plain", Authorization: `Bearer ${runner.token}` },
        body: JSON.stringify({ Rules: customRules, DRYRUN: true }),
      });
      expect(res.status).toBe(200);
      const { task } = await res.json();
      const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, task.id));
      expect(row?.input).toEqual({ rules: customRules, dryRun: true });
    });

    it("400 naming the field, 401, 403 and 404, creating no task", async () => {
      const before = (await t.database.db.select().from(tasks)).length;
      const params = { studyKey: "flu" };
      const empty = await replayCaseAdminCall(t, all, { params, rawBody: "", token: runner.token });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toMatch(/body/);
      const notRules = await replayCaseAdminCall(t, all, { params, body: { rules: "x" }, token: runner.token });
      expect(notRules.status).toBe(400);
      expect(notRules.body.error).toMatch(/rules/);
      const unknown = await replayCaseAdminCall(t, all, {
        params,
        body: { rules: [{ name: "NO_SUCH_ACTION", data: [] }] },
        token: runner.token,
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/rules\[0\]/);
      expect((await replayCaseAdminCall(t, all, { params, body: { rules: customRules } })).status).toBe(401);
      const denied = await replayCaseAdminCall(t, all, { params, body: { rules: customRules }, token: editor.token });
      expect(denied.status).toBe(403);
      expect(denied.failed).toBe(true);
      const missing = await replayCaseAdminCall(t, all, {
        params: { studyKey: "nope" },
        body: { rules: customRules },
        token: admin,
      });
      expect(missing.status).toBe(404);
      expect((await t.database.db.select().from(tasks)).length).toBe(before);
    });
  });

  describe("runStudyActionForParticipant: POST …/run-actions/participants/{participantID}", () => {
    const one = caseAdminCall("runStudyActionForParticipant");

    it("runs at once on the participant: 200 {participantCount, duration, ruleResults}, state saved, audited", async () => {
      const answer = await replayCaseAdminCall(t, one, {
        params: { studyKey: "flu", participantID: "p1" },
        body: { rules: [...customRules, setFlag("second", "x"), onEvent("TIMER", setFlag("never", "x"))] },
        token: runner.token,
      });
      expect(answer.status).toBe(200);
      expect(answer.failed).toBe(false);
      expect(answer.body).toEqual({ participantCount: 1, duration: 0, ruleResults: [1, 1, 0] });
      const p1 = await readParticipant(t.database.db, "flu", "p1");
      expect(p1?.flags).toEqual({ seen: "yes", second: "x" });
      expect((await readParticipant(t.database.db, "flu", "p2"))?.flags).toEqual({});
      const [entry] = (await audits("run-actions.participant")).filter((row) => row.target === "p1");
      expect(entry).toMatchObject({ studyKey: "flu", actor: runner.subject });
    });

    it("any status (temporary, deleted accounts too); an unknown participant counts 0 and writes no state", async () => {
      for (const participantID of ["tmp", "gone"]) {
        const answer = await replayCaseAdminCall(t, one, {
          params: { studyKey: "flu", participantID },
          body: { rules: customRules },
          token: runner.token,
        });
        expect(answer.body).toEqual({ participantCount: 1, duration: 0, ruleResults: [1] });
        expect((await readParticipant(t.database.db, "flu", participantID))?.flags).toEqual({ seen: "yes" });
      }
      const none = await replayCaseAdminCall(t, one, {
        params: { studyKey: "flu", participantID: "nobody" },
        body: { rules: customRules },
        token: runner.token,
      });
      expect(none.status).toBe(200);
      expect(none.body).toEqual({ participantCount: 0, duration: 0, ruleResults: [0] });
      expect(await readParticipant(t.database.db, "flu", "nobody")).toBeUndefined();
    });

    it("a rule that changes nothing reports 0 and leaves the row's version alone", async () => {
      const before = await readParticipant(t.database.db, "flu", "p1");
      const answer = await replayCaseAdminCall(t, one, {
        params: { studyKey: "flu", participantID: "p1" },
        body: { rules: customRules },
        token: runner.token,
      });
      expect(answer.body.ruleResults).toEqual([0]);
      expect((await readParticipant(t.database.db, "flu", "p1"))?.version).toBe(before?.version);
    });

    it("reports the rules write are stored with the CUSTOM event", async () => {
      const answer = await replayCaseAdminCall(t, one, {
        params: { studyKey: "flu", participantID: "p2" },
        body: { rules: [call("INIT_REPORT", str("manual-check"))] },
        token: runner.token,
      });
      expect(answer.status).toBe(200);
      const stored = await t.database.db
        .select()
        .from(reports)
        .where(and(eq(reports.studyKey, "flu"), eq(reports.participantId, "p2")));
      expect(stored.map((row) => [row.key, row.eventType])).toEqual([["manual-check", "CUSTOM"]]);
    });

    it("a rule failing at run time: 422, the participant unchanged, the failure recorded", async () => {
      const before = await readParticipant(t.database.db, "flu", "p2");
      const answer = await replayCaseAdminCall(t, one, {
        params: { studyKey: "flu", participantID: "p2" },
        body: { rules: [setFlag("first", "x"), failingRule] },
        token: runner.token,
      });
      expect(answer.status).toBe(422);
      expect(answer.failed).toBe(true);
      expect(answer.body.error).toMatch(/rule 1/);
      expect(await readParticipant(t.database.db, "flu", "p2")).toEqual(before);
      const failures = await t.database.db
        .select()
        .from(ruleFailures)
        .where(and(eq(ruleFailures.studyKey, "flu"), eq(ruleFailures.participantId, "p2")));
      expect(failures.map((row) => [row.eventType, row.ruleIndex])).toEqual([["CUSTOM", 1]]);
    });

    it("400 naming the field, 401, 403 and 404, writing nothing", async () => {
      const params = { studyKey: "flu", participantID: "p2" };
      const before = await readParticipant(t.database.db, "flu", "p2");
      const auditCount = (await audits("run-actions.participant")).length;
      const empty = await replayCaseAdminCall(t, one, { params, rawBody: "", token: runner.token });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toMatch(/body/);
      const noRules = await replayCaseAdminCall(t, one, { params, body: { rule: [] }, token: runner.token });
      expect(noRules.status).toBe(400);
      expect(noRules.body.error).toMatch(/rules/);
      const badRule = await replayCaseAdminCall(t, one, {
        params,
        body: { rules: [{ name: "IFTHEN", data: [{ dtype: "exp", exp: { name: "nope", data: [] } }] }] },
        token: runner.token,
      });
      expect(badRule.status).toBe(400);
      expect(badRule.body.error).toMatch(/rules\[0\]\.data\[0\]\.exp\.name/);
      expect((await replayCaseAdminCall(t, one, { params, body: { rules: customRules } })).status).toBe(401);
      const denied = await replayCaseAdminCall(t, one, { params, body: { rules: customRules }, token: editor.token });
      expect(denied.status).toBe(403);
      await setupStudy(t, { key: "other" });
      const other = await researcher(t, "other", "run-study-action");
      expect(
        (await replayCaseAdminCall(t, one, { params, body: { rules: customRules }, token: other.token })).status,
      ).toBe(403);
      const missing = await replayCaseAdminCall(t, one, {
        params: { studyKey: "nope", participantID: "p2" },
        body: { rules: customRules },
        token: admin,
      });
      expect(missing.status).toBe(404);
      expect(await readParticipant(t.database.db, "flu", "p2")).toEqual(before);
      expect((await audits("run-actions.participant")).length).toBe(auditCount);
    });
  });

  describe("runStudyActionOnPreviousResponses: POST …/run-actions/previous-responses/{participantID}", () => {
    const previous = caseAdminCall("runStudyActionOnPreviousResponses");
    const T = 1_700_000_000;
    const lastSurvey = (key: string) =>
      call("IFTHEN", exp(call("checkSurveyResponseKey", str(key))), exp(setFlag("last", key)));
    const replayRules = [lastSurvey("intake"), lastSurvey("weekly"), call("INIT_REPORT", str("replayed"))];
    const responseIds: Record<string, string> = {};

    beforeAll(async () => {
      await insertParticipant(t.database.db, { studyKey: "flu", participantId: "r1" });
      await insertParticipant(t.database.db, { studyKey: "flu", participantId: "r2" });
      // inserted out of arrival order: the replay orders by arrival
      for (const [name, key, arrivedAt] of [
        ["third", "intake", T + 300],
        ["first", "intake", T + 100],
        ["second", "weekly", T + 200],
      ] as const) {
        const [row] = await t.database.db
          .insert(surveyResponses)
          .values({ studyKey: "flu", participantId: "r1", key, submittedAt: arrivedAt - 50, arrivedAt })
          .returning();
        responseIds[name] = row!.id;
      }
      await t.database.db
        .insert(surveyResponses)
        .values({ studyKey: "flu", participantId: "r2", key: "weekly", submittedAt: T, arrivedAt: T });
    });

    const replay = (participantID: string, body: Record<string, unknown>, token = runner.token) =>
      replayCaseAdminCall(t, previous, { params: { studyKey: "flu", participantID }, body, token });
    const reportsOf = (participantId: string) =>
      t.database.db
        .select()
        .from(reports)
        .where(and(eq(reports.studyKey, "flu"), eq(reports.participantId, participantId), eq(reports.key, "replayed")));

    it("replays the window's responses in arrival order as SUBMIT events: reports dated at submission", async () => {
      // case-admin sends from/to as Date.getTime() / 1000
      const answer = await replay("r1", { rules: replayRules, surveyKeys: ["intake"], from: T + 100, to: T + 400 });
      expect(answer.status).toBe(200);
      expect(answer.failed).toBe(false);
      expect(answer.body).toEqual({ participantCount: 1, duration: 0, ruleResults: [0, 0, 0] });
      // only the intake that arrived after `from`: the third one
      expect((await readParticipant(t.database.db, "flu", "r1"))?.flags).toEqual({ last: "intake" });
      const stored = await reportsOf("r1");
      expect(stored.map((row) => [row.responseId, row.timestamp, row.eventType])).toEqual([
        [responseIds.third, T + 250, "SUBMIT"],
      ]);
      const [entry] = await t.database.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, "run-actions.previous-responses"), eq(auditLog.target, "r1")));
      expect(entry?.details).toMatchObject({ responseCount: 1, surveyKeys: ["intake"], from: T + 100, to: T + 400 });
    });

    it("without a selection every response, oldest first; `to` alone bounds it; others untouched", async () => {
      await replay("r1", { rules: replayRules });
      // the last to arrive was the third (intake)
      expect((await readParticipant(t.database.db, "flu", "r1"))?.flags).toEqual({ last: "intake" });
      await replay("r1", { rules: replayRules, to: T + 250.7 });
      expect((await readParticipant(t.database.db, "flu", "r1"))?.flags).toEqual({ last: "weekly" });
      expect((await reportsOf("r1")).length).toBe(1 + 3 + 2);
      expect((await readParticipant(t.database.db, "flu", "r2"))?.flags).toEqual({});
      const none = await replay("nobody", { rules: replayRules });
      expect(none.body).toEqual({ participantCount: 0, duration: 0, ruleResults: [0, 0, 0] });
    });

    it("a rule failing on one response: 422 and nothing of the replay stays", async () => {
      const before = await readParticipant(t.database.db, "flu", "r2");
      const reportCount = (await reportsOf("r2")).length;
      const answer = await replay("r2", { rules: [call("INIT_REPORT", str("replayed")), failingRule] });
      expect(answer.status).toBe(422);
      expect(await readParticipant(t.database.db, "flu", "r2")).toEqual(before);
      expect((await reportsOf("r2")).length).toBe(reportCount);
    });

    it("400 naming the field, 401, 403 and 404, writing nothing", async () => {
      const before = await readParticipant(t.database.db, "flu", "r2");
      for (const [body, field] of [
        [{ rules: replayRules, from: "yesterday" }, /from/],
        [{ rules: replayRules, to: -1 }, /to/],
        [{ rules: replayRules, from: 9223372036854776000 }, /from is beyond the year 9999/],
        [{ rules: replayRules, surveyKeys: "weekly" }, /surveyKeys/],
        [{ surveyKeys: [] }, /rules/],
        [{ rules: [{ name: "NOPE" }] }, /rules\[0\]/],
      ] as const) {
        const answer = await replay("r2", body);
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.error).toMatch(field);
      }
      expect(
        (
          await replayCaseAdminCall(t, previous, {
            params: { studyKey: "flu", participantID: "r2" },
            body: { rules: replayRules },
          })
        ).status,
      ).toBe(401);
      expect((await replay("r2", { rules: replayRules }, editor.token)).status).toBe(403);
      const missing = await replayCaseAdminCall(t, previous, {
        params: { studyKey: "nope", participantID: "r2" },
        body: { rules: replayRules },
        token: admin,
      });
      expect(missing.status).toBe(404);
      expect(await readParticipant(t.database.db, "flu", "r2")).toEqual(before);
      expect((await reportsOf("r2")).length).toBe(0);
    });
  });
});

describe("case-admin previous responses over every participant (a task a real worker runs)", () => {
  let t: TestApp;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let runner: { subject: string; token: string };
  const T = 1_700_000_000;
  const all = caseAdminCall("runStudyActionOnPreviousResponsesForAllParticipants");
  const rules = [
    call("IFTHEN", exp(call("checkSurveyResponseKey", str("weekly"))), exp(setFlag("replayed", "weekly"))),
    call("INIT_REPORT", str("replayed")),
  ];

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-previous-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    worker = startWorkerBesideApi(t, resultDir, { batchSize: 2, chunkSize: 3 });
    await setupStudy(t, { key: "flu" });
    runner = await researcher(t, "flu", "run-study-action");
    for (let i = 0; i < 5; i++) {
      const participantId = `p${i}`;
      await insertParticipant(t.database.db, { studyKey: "flu", participantId });
      await t.database.db.insert(surveyResponses).values({
        studyKey: "flu",
        participantId,
        key: i === 3 ? "intake" : "weekly",
        submittedAt: T,
        arrivedAt: T + i,
      });
    }
    await insertParticipant(t.database.db, { studyKey: "flu", participantId: "tmp", studyStatus: "temporary" });
    await t.database.db
      .insert(surveyResponses)
      .values({ studyKey: "flu", participantId: "tmp", key: "weekly", submittedAt: T, arrivedAt: T });
  });
  afterAll(async () => {
    await worker?.stop();
    await t.close();
  });

  async function poll(taskURL: string, token: string) {
    for (let i = 0; i < 200; i++) {
      const res = await t.app.request(taskURL, { headers: { Authorization: `Bearer ${token}` } });
      const body = await res.json();
      if (res.status !== 200) return { status: res.status, body };
      if (body.task.status === "completed") return { status: res.status, body };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("task did not complete");
  }

  it("200 {task}; polled at previous-responses/task/{id}; the result downloaded as {result}", async () => {
    const answer = await replayCaseAdminCall(t, all, {
      params: { studyKey: "flu" },
      body: { rules, surveyKeys: undefined, from: T - 1, to: undefined },
      token: runner.token,
    });
    expect(answer.status).toBe(200);
    expect(answer.failed).toBe(false);
    const taskID = answer.body.task.id as string;
    expect(answer.body.task).toMatchObject({ status: "in_progress", studyflowStatus: "queued", targetCount: 5 });
    const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, taskID));
    expect(row).toMatchObject({
      kind: "run-actions-previous-responses",
      input: { rules, surveyKeys: [], from: T - 1, to: 0 },
    });
    const done = await poll(`/v1/studies/flu/run-actions/previous-responses/task/${taskID}`, runner.token);
    expect(done.body.task).toMatchObject({ status: "completed", studyflowStatus: "completed", processedCount: 5 });
    const result = await t.app.request(`/v1/studies/flu/run-actions/previous-responses/task/${taskID}/result`, {
      headers: { Authorization: `Bearer ${runner.token}` },
    });
    expect(result.status).toBe(200);
    expect(result.headers.get("content-disposition")).toMatch(/filename=previous-responses-/);
    expect((await result.json()).result).toMatchObject({
      participantCount: 5,
      participantStateChangedPerRule: [0, 0],
      errorCount: 0,
    });
    for (let i = 0; i < 5; i++) {
      expect((await readParticipant(t.database.db, "flu", `p${i}`))?.flags).toEqual(
        i === 3 ? {} : { replayed: "weekly" },
      );
    }
    expect((await readParticipant(t.database.db, "flu", "tmp"))?.flags).toEqual({});
    const stored = await t.database.db.select().from(reports).where(eq(reports.key, "replayed"));
    expect(stored).toHaveLength(5);
    expect(stored.every((report) => report.eventType === "SUBMIT" && report.responseId !== null)).toBe(true);
    // case-admin's general action page follows run-actions tasks at data-exporter/participants/task/{id}
    const run = await replayCaseAdminCall(t, caseAdminCall("runStudyActionForAllParticipants"), {
      params: { studyKey: "flu" },
      body: { rules: [setFlag("bulk", "1")] },
      token: runner.token,
    });
    const followed = await poll(`/v1/studies/flu/data-exporter/participants/task/${run.body.task.id}`, runner.token);
    expect(followed.status).toBe(200);
    expect(followed.body.task).toMatchObject({ status: "completed", processedCount: 5 });
    // a previous-responses task is not a participants export
    const other = await t.app.request(`/v1/studies/flu/data-exporter/participants/task/${taskID}`, {
      headers: { Authorization: `Bearer ${runner.token}` },
    });
    expect(other.status).toBe(404);
  });

  it("a participant whose rules fail keeps its state and is listed; 400/401/403/404 create no task", async () => {
    const answer = await replayCaseAdminCall(t, all, {
      params: { studyKey: "flu" },
      body: { rules: [setFlag("late", "x"), failingRule], surveyKeys: ["intake"] },
      token: runner.token,
    });
    const done = await poll(`/v1/studies/flu/run-actions/previous-responses/task/${answer.body.task.id}`, runner.token);
    expect(done.body.task.processedCount).toBe(5);
    const result = await t.app.request(
      `/v1/studies/flu/run-actions/previous-responses/task/${answer.body.task.id}/result`,
      { headers: { Authorization: `Bearer ${runner.token}` } },
    );
    expect((await result.json()).result).toMatchObject({ errorCount: 1, errors: [{ participantId: "p3" }] });
    expect((await readParticipant(t.database.db, "flu", "p3"))?.flags).toEqual({ bulk: "1" });

    const before = (await t.database.db.select().from(tasks)).length;
    const params = { studyKey: "flu" };
    const bad = await replayCaseAdminCall(t, all, { params, body: { rules, from: "now" }, token: runner.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/from/);
    expect((await replayCaseAdminCall(t, all, { params, body: { rules } })).status).toBe(401);
    const editor = await researcher(t, "flu", "edit-participant-data");
    expect((await replayCaseAdminCall(t, all, { params, body: { rules }, token: editor.token })).status).toBe(403);
    const admin = await managementToken(t, "root", true);
    expect(
      (await replayCaseAdminCall(t, all, { params: { studyKey: "nope" }, body: { rules }, token: admin })).status,
    ).toBe(404);
    expect((await t.database.db.select().from(tasks)).length).toBe(before);
    // another researcher may not see the task
    const colleague = await researcher(t, "flu", "run-study-action");
    const hidden = await t.app.request(`/v1/studies/flu/run-actions/previous-responses/task/${answer.body.task.id}`, {
      headers: { Authorization: `Bearer ${colleague.token}` },
    });
    expect(hidden.status).toBe(403);
  });
});
