import { OpenAPIHono } from "@hono/zod-openapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { permissions } from "@studyflow/db";
import { grantPermission } from "@studyflow/domain/study-setup";
import type { AppEnv } from "../../src/app-env";
import { presentCasePermission } from "@studyflow/presenters/case-permission";
import { managementToken, postJson, setupStudy } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import {
  CASE_ADMIN_CALLS,
  caseAdminCall,
  caseAdminSeesFailure,
  pathOf,
  placeholdersOf,
  replayCaseAdminCall,
} from "./replay";

describe("case-admin's calls (case-admin-calls.json)", () => {
  it("all read: method, a path under /v1 once filled in, a status check", () => {
    expect(CASE_ADMIN_CALLS.length).toBeGreaterThanOrEqual(100);
    for (const call of CASE_ADMIN_CALLS) {
      expect(["GET", "POST", "PUT", "DELETE"]).toContain(call.method);
      expect(call.status.length).toBeGreaterThan(0);
      const values = Object.fromEntries(placeholdersOf(call).map((name) => [name, name === "url" ? "/v1/x" : "v"]));
      if (placeholdersOf(call).includes("resourceUrl")) values.resourceUrl = "/v1/studies/s/data-exporter/responses";
      const path = pathOf(call, values);
      expect({ func: call.func, path }).toEqual({ func: call.func, path: expect.stringMatching(/^\/v1\/[^'`$+ ]*$/) });
    }
  });

  it("fills template literals and concatenations as case-admin's code does", () => {
    expect(pathOf(caseAdminCall("getParticipants"), { studyKey: "flu", queryString: "page=2&limit=10" })).toBe(
      "/v1/studies/flu/data-explorer/participants?page=2&limit=10",
    );
    const permissionsOfAccount = CASE_ADMIN_CALLS.find(
      (call) => call.func === "getPermissions" && call.url.includes("service-accounts"),
    );
    expect(permissionsOfAccount && pathOf(permissionsOfAccount, { serviceAccountId: "a1" })).toBe(
      "/v1/user-management/service-accounts/a1/permissions",
    );
    expect(placeholdersOf(caseAdminCall("deleteStudyCodeListEntry", "DELETE"))).toEqual([
      "studyKey",
      "listKey",
      "codeQuery",
    ]);
    expect(() => pathOf(caseAdminCall("getStudies"), {})).not.toThrow();
    expect(() => pathOf(caseAdminCall("getStudy"), {})).toThrow(/give a value for \$\{studyKey\}/);
    expect(() => caseAdminCall("getPermissions")).toThrow(/2 calls of getPermissions/);
    expect(() => caseAdminCall("noSuchFunction")).toThrow(/0 calls/);
  });

  it("judges answers by each call's own check", () => {
    const create = caseAdminCall("createStudy");
    expect([200, 201, 202, 400].map((status) => caseAdminSeesFailure(create, status))).toEqual([
      false,
      false,
      true,
      true,
    ]);
    const status = caseAdminCall("updateStudyStatus");
    expect([200, 201].map((code) => caseAdminSeesFailure(status, code))).toEqual([false, true]);
  });
});

describe("replaying against the app", () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    await setupStudy(t, { key: "covid" });
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it("sends the body as text/plain with the token, and reads the answer as case-admin does", async () => {
    // a stand-in at the path of case-admin's call, recording what arrives there
    const arrived: { contentType?: string; authorization?: string; body: string }[] = [];
    const app = new OpenAPIHono<AppEnv>();
    app.put("/v1/studies/:studyKey/status", async (c) => {
      arrived.push({
        contentType: c.req.header("content-type"),
        authorization: c.req.header("authorization"),
        body: await c.req.text(),
      });
      return c.req.param("studyKey") === "flu" ? c.json({ message: "ok" }) : c.text("not json", 404);
    });
    const call = caseAdminCall("updateStudyStatus");
    const answer = await replayCaseAdminCall({ app }, call, {
      params: { studyKey: "flu" },
      body: { status: "active" },
      token: "tok",
    });
    expect(answer).toEqual({ status: 200, failed: false, path: "/v1/studies/flu/status", body: { message: "ok" } });
    expect(arrived).toEqual([
      { contentType: "text/plain;charset=UTF-8", authorization: "Bearer tok", body: '{"status":"active"}' },
    ]);
    const notJson = await replayCaseAdminCall({ app }, call, { params: { studyKey: "x" }, rawBody: "{" });
    // case-admin falls back to {error: statusText} (empty in process, "Not Found" over HTTP)
    expect(notJson).toEqual({
      status: 404,
      failed: true,
      path: "/v1/studies/x/status",
      body: { error: expect.any(String) },
    });
    expect(arrived[1]).toEqual({ contentType: "text/plain;charset=UTF-8", body: "{" });
  });

  it("replays against the real app: answers, permissions and case-admin's verdict", async () => {
    const token = await managementToken(t, "explorer");
    await grantPermission(t.database.db, "explorer", "flu", "get-participant-states");
    const call = caseAdminCall("getParticipants");
    const answer = await replayCaseAdminCall(t, call, {
      params: { studyKey: "flu", queryString: "page=1&limit=10" },
      token,
    });
    expect(answer).toMatchObject({ status: 200, failed: false });
    expect(answer.body.participants).toEqual([]);
    const other = await replayCaseAdminCall(t, call, { params: { studyKey: "covid", queryString: "" }, token });
    expect(other).toMatchObject({ status: 403, failed: true });
    expect(other.body.error).toMatch(/missing permission "get-participant-states" for study "covid"/);
    const anonymous = await replayCaseAdminCall(t, call, { params: { studyKey: "flu", queryString: "" } });
    expect(anonymous).toMatchObject({ status: 401, failed: true });
  });

  it("refuses a replay that would not be case-admin's call", async () => {
    await expect(replayCaseAdminCall(t, caseAdminCall("getStudies"), { body: {}, token: admin })).rejects.toThrow(
      /sends no body/,
    );
    await expect(
      replayCaseAdminCall(t, caseAdminCall("updateStudyStatus"), { params: { studyKey: "flu" }, token: admin }),
    ).rejects.toThrow(/sends JSON\.stringify/);
  });

  it("lists only the studies a subject holds study grants for: a users or messaging grant on * shows none", async () => {
    const db = t.database.db;
    await db.insert(permissions).values([
      { subjectId: "mailer", resourceType: "messaging", studyKey: "global-email-templates", action: "*" },
      { subjectId: "deleter", resourceType: "users", studyKey: "*", action: "delete-users" },
      { subjectId: "robot", subjectType: "service-account", studyKey: "*", action: "*" },
    ]);
    await t.settle();
    const list = async (subject: string) => {
      const answer = await replayCaseAdminCall(t, caseAdminCall("getStudies"), {
        token: await managementToken(t, subject),
      });
      expect(answer.status).toBe(200);
      return (answer.body.studies as { key: string }[]).map((study) => study.key);
    };
    expect(await list("mailer")).toEqual([]);
    expect(await list("deleter")).toEqual([]);
    expect(await list("robot")).toEqual([]);
    await grantPermission(db, "deleter", "flu", "read-study-config");
    expect(await list("deleter")).toEqual(["flu"]);
    expect(await list("root")).toEqual([]);
    const all = await replayCaseAdminCall(t, caseAdminCall("getStudies"), { token: admin });
    expect((all.body.studies as { key: string }[]).map((study) => study.key)).toEqual(["covid", "flu"]);
    // nor does a "*" grant of another type open a study's routes
    const read = await postJson(
      t,
      "/v1/studies/flu/track-account",
      { trackAccount: false },
      await managementToken(t, "mailer"),
      "PUT",
    );
    expect(read.status).toBe(403);
  });
});

describe("routers mounted for case-admin's groups", () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp();
    token = await managementToken(t, "someone");
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(["/v1/messaging/no-such-route", "/v1/user-management/no-such-route"])(
    "%s: 401 without a management token, 404 with one",
    async (path) => {
      const anonymous = await t.app.request(path);
      expect(anonymous.status).toBe(401);
      expect((await anonymous.json()).error).toMatch(/Authorization/);
      const participantToken = await t.app.request(path, { headers: { Authorization: "Bearer not-a-token" } });
      expect(participantToken.status).toBe(401);
      const known = await t.app.request(path, { headers: { Authorization: `Bearer ${token}` } });
      expect(known.status).toBe(404);
      expect(await known.json()).toEqual({ error: `no route for GET ${path}` });
    },
  );

  it("/v1/auth keeps the participant sign-in routes and adds no router-wide auth", async () => {
    const login = await t.app.request("/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "text/plain;charset=UTF-8" },
      body: "{",
    });
    expect(login.status).toBe(400);
    const unknown = await t.app.request("/v1/auth/no-such-route");
    expect(unknown.status).toBe(404);
  });
});

describe("presentCasePermission", () => {
  it("shows a permission row in CASE's shape, without an empty limiter", () => {
    const row = {
      id: 42,
      subjectId: "u1",
      subjectType: "management-user" as const,
      resourceType: "study" as const,
      studyKey: "flu",
      action: "update-survey" as const,
      limiter: [{ surveyKey: "intake" }],
    };
    expect(presentCasePermission(row)).toEqual({
      id: "42",
      subjectId: "u1",
      subjectType: "management-user",
      resourceType: "study",
      resourceKey: "flu",
      action: "update-survey",
      limiter: [{ surveyKey: "intake" }],
    });
    expect(presentCasePermission({ ...row, limiter: null })).not.toHaveProperty("limiter");
    expect(presentCasePermission({ ...row, limiter: [] })).not.toHaveProperty("limiter");
  });
});
