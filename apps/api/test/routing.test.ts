import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managementToken, postJson, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * The routers as mounted: every documented operation at its full path, each router's auth
 * covering exactly the paths below its prefix, and the public routes staying public.
 */
describe("routers and their auth boundaries", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
  });
  afterAll(async () => {
    await t.close();
  });

  const management = [
    "POST /v1/studies/study-a/participants/p1/responses",
    "POST /v1/studies/study-a/run-actions/participants/",
    "POST /v1/studies/study-a/run-actions/validate",
    "GET /v1/studies/study-a/run-actions/participants/tasks",
    "GET /v1/studies/study-a/run-actions/participants/task/t1",
    "GET /v1/studies/study-a/run-actions/participants/task/t1/result",
    "POST /v1/studies/study-a/run-actions/participants/task/t1/cancel",
    "GET /v1/studies/study-a/run-actions/participants/task/t1/events",
    "PUT /v1/studies/study-a/track-account",
    "GET /v1/studies/study-a/daily-export-config",
    "PUT /v1/studies/study-a/daily-export-config",
    "GET /v1/studies/study-a/rule-failures",
    "GET /v1/studies",
    "GET /v1/studies/study-a",
    "GET /v1/studies/study-a/participant-counts",
    "PATCH /v1/studies/study-a",
    "GET /v1/studies/study-a/audit-log",
    "GET /v1/studies/study-a/messages",
    "GET /v1/studies/study-a/code-lists",
    "POST /v1/studies/study-a/code-lists/kits/codes",
    "GET /v1/studies/study-a/code-lists/kits/codes",
    "GET /v1/studies/study-a/code-lists/kits/count",
    "DELETE /v1/studies/study-a/code-lists/kits/codes/K1",
    "GET /v1/studies/study-a/variables",
    "GET /v1/studies/study-a/variables/kitStock",
    "PUT /v1/studies/study-a/variables/kitStock",
    "DELETE /v1/studies/study-a/variables/kitStock",
    "GET /v1/studies/study-a/subscriptions",
    "POST /v1/studies/study-a/subscriptions",
    "DELETE /v1/studies/study-a/subscriptions/1",
    "GET /v1/studies/study-a/message-templates",
    "GET /v1/studies/study-a/message-templates/weekly-reminder/en",
    "PUT /v1/studies/study-a/message-templates/weekly-reminder/en",
    "DELETE /v1/studies/study-a/message-templates/weekly-reminder/en",
    "GET /v1/studies/study-a/rules",
    "POST /v1/studies/study-a/rules",
    "GET /v1/studies/study-a/rules/current",
    "GET /v1/studies/study-a/timer",
    "PUT /v1/studies/study-a/timer",
    "GET /v1/studies/study-a/timer/ticks",
    "POST /v1/studies/study-a/surveys",
    "GET /v1/studies/study-a/surveys",
    "GET /v1/studies/study-a/surveys/intake/versions",
    "GET /v1/studies/study-a/surveys/intake/versions/26-01-1",
    "POST /v1/studies/study-a/surveys/intake/unpublish",
    "GET /v1/studies/study-a/data-exporter/survey-info/",
    "GET /v1/studies/study-a/data-exporter/responses/count",
    "POST /v1/studies/study-a/data-exporter/responses/",
    "GET /v1/studies/study-a/data-exporter/participants/count",
    "POST /v1/studies/study-a/data-exporter/participants/",
    "GET /v1/studies/study-a/data-exporter/reports/count",
    "POST /v1/studies/study-a/data-exporter/reports/",
    "GET /v1/studies/study-a/data-exporter/responses/task/t1",
    "GET /v1/studies/study-a/data-exporter/responses/task/t1/result",
    "GET /v1/studies/study-a/data-exporter/participants/task/t1",
    "GET /v1/studies/study-a/data-exporter/participants/task/t1/result",
    "GET /v1/studies/study-a/data-exporter/reports/task/t1",
    "GET /v1/studies/study-a/data-exporter/reports/task/t1/result",
    "GET /v1/studies/study-a/data-exporter/responses/daily-exports",
    "GET /v1/studies/study-a/data-exporter/responses/daily-exports/eA",
    "POST /v1/studies/study-a/data-exporter/confidential-responses/",
    "GET /v1/studies/study-a/data-exporter/confidential-responses/",
    "GET /v1/studies/study-a/data-exporter/confidential-responses/eA",
    "GET /v1/studies/study-a/export-config",
  ];
  const participant = [
    "POST /v1/study-service/events/study-a/enter",
    "POST /v1/study-service/events/study-a/leave",
    "POST /v1/study-service/events/study-a/merge-temporary-participant",
    "POST /v1/study-service/events/study-a/submit",
    "POST /v1/study-service/events/study-a/custom",
    "GET /v1/study-service/participant/studies",
    "GET /v1/study-service/participant/studies/study-a",
    "GET /v1/study-service/participant/studies/study-a/surveys/intake",
  ];
  const request = (operation: string, token?: string) => {
    const [method, path] = operation.split(" ") as [string, string];
    return method === "GET" || method === "DELETE"
      ? t.app.request(path, { method, headers: token ? { Authorization: `Bearer ${token}` } : {} })
      : postJson(t, path, {}, token, method);
  };

  it("documents exactly these operations, with the security of their router", async () => {
    const doc = await (await t.app.request("/openapi.json")).json();
    const documented = Object.entries(doc.paths as Record<string, Record<string, { security?: unknown }>>).flatMap(
      ([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation.security]),
    );
    // a management token or a service account's API key
    const managementSecurity = [{ managementBearer: [] }, { serviceApiKey: [] }];
    const participantSecurity = [{ participantBearer: [] }];
    expect(Object.fromEntries(documented)).toEqual({
      "GET /healthz": undefined,
      "GET /readyz": undefined,
      "POST /v1/password-reset/initiate": undefined,
      "POST /v1/password-reset/reset": undefined,
      "POST /v1/studies/{studyKey}/participants/{participantID}/responses": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/participants/": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/validate": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/tasks": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/result": managementSecurity,
      "POST /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/cancel": managementSecurity,
      "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/events": managementSecurity,
      "PUT /v1/studies/{studyKey}/track-account": managementSecurity,
      "GET /v1/studies/{studyKey}/daily-export-config": managementSecurity,
      "PUT /v1/studies/{studyKey}/daily-export-config": managementSecurity,
      "GET /v1/studies/{studyKey}/rule-failures": managementSecurity,
      "GET /v1/studies": managementSecurity,
      "GET /v1/studies/{studyKey}": managementSecurity,
      "GET /v1/studies/{studyKey}/participant-counts": managementSecurity,
      "PATCH /v1/studies/{studyKey}": managementSecurity,
      "GET /v1/studies/{studyKey}/audit-log": managementSecurity,
      "GET /v1/studies/{studyKey}/messages": managementSecurity,
      "GET /v1/studies/{studyKey}/code-lists": managementSecurity,
      "POST /v1/studies/{studyKey}/code-lists/{listKey}/codes": managementSecurity,
      "GET /v1/studies/{studyKey}/code-lists/{listKey}/codes": managementSecurity,
      "GET /v1/studies/{studyKey}/code-lists/{listKey}/count": managementSecurity,
      "DELETE /v1/studies/{studyKey}/code-lists/{listKey}/codes/{code}": managementSecurity,
      "GET /v1/studies/{studyKey}/variables": managementSecurity,
      "GET /v1/studies/{studyKey}/variables/{key}": managementSecurity,
      "PUT /v1/studies/{studyKey}/variables/{key}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/variables/{key}": managementSecurity,
      "GET /v1/studies/{studyKey}/subscriptions": managementSecurity,
      "POST /v1/studies/{studyKey}/subscriptions": managementSecurity,
      "DELETE /v1/studies/{studyKey}/subscriptions/{id}": managementSecurity,
      "GET /v1/studies/{studyKey}/message-templates": managementSecurity,
      "GET /v1/studies/{studyKey}/message-templates/{messageType}/{language}": managementSecurity,
      "PUT /v1/studies/{studyKey}/message-templates/{messageType}/{language}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/message-templates/{messageType}/{language}": managementSecurity,
      "GET /v1/studies/{studyKey}/rules": managementSecurity,
      "POST /v1/studies/{studyKey}/rules": managementSecurity,
      "GET /v1/studies/{studyKey}/rules/{version}": managementSecurity,
      "GET /v1/studies/{studyKey}/timer": managementSecurity,
      "PUT /v1/studies/{studyKey}/timer": managementSecurity,
      "GET /v1/studies/{studyKey}/timer/ticks": managementSecurity,
      "POST /v1/studies/{studyKey}/surveys": managementSecurity,
      "GET /v1/studies/{studyKey}/surveys": managementSecurity,
      "GET /v1/studies/{studyKey}/surveys/{surveyKey}/versions": managementSecurity,
      "GET /v1/studies/{studyKey}/surveys/{surveyKey}/versions/{versionId}": managementSecurity,
      "POST /v1/studies/{studyKey}/surveys/{surveyKey}/unpublish": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/responses": managementSecurity,
      "DELETE /v1/studies/{studyKey}/data-explorer/responses": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/responses/{responseID}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/data-explorer/responses/{responseID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/participants": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/participants/{participantID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/reports/keys": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/reports": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/reports/{reportID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/files": managementSecurity,
      "GET /v1/studies/{studyKey}/data-explorer/files/{fileID}": managementSecurity,
      "DELETE /v1/studies/{studyKey}/data-explorer/files/{fileID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/survey-info/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/count": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/responses/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/participants/count": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/participants/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/reports/count": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/reports/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/task/{taskID}/result": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/participants/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/participants/task/{taskID}/result": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/reports/task/{taskID}": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/reports/task/{taskID}/result": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/daily-exports": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/responses/daily-exports/{exportID}": managementSecurity,
      "POST /v1/studies/{studyKey}/data-exporter/confidential-responses/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/confidential-responses/": managementSecurity,
      "GET /v1/studies/{studyKey}/data-exporter/confidential-responses/{exportID}": managementSecurity,
      "GET /v1/studies/{studyKey}/export-config": managementSecurity,
      "POST /v1/study-service/events/{studyKey}/enter": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/leave": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/merge-temporary-participant": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/submit": participantSecurity,
      "POST /v1/study-service/events/{studyKey}/custom": participantSecurity,
      "GET /v1/study-service/participant/studies": participantSecurity,
      "GET /v1/study-service/participant/studies/{studyKey}": participantSecurity,
      "GET /v1/study-service/participant/studies/{studyKey}/surveys/{surveyKey}": participantSecurity,
      "POST /v1/study-service/temp-participant/register": undefined,
    });
    const submit = doc.paths["/v1/studies/{studyKey}/participants/{participantID}/responses"].post as {
      parameters: { name: string; in: string }[];
    };
    expect(submit.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(["path:studyKey", "path:participantID"]);
  });

  it("answers 401 without a token on every authenticated operation", async () => {
    for (const operation of [...management, ...participant]) {
      const res = await request(operation);
      expect(res.status, operation).toBe(401);
      expect(await res.json(), operation).toEqual({ error: "missing Authorization header" });
    }
  });

  it("keeps each kind of token to its own routers", async () => {
    const researcher = await managementToken(t, "root", true);
    for (const operation of participant) expect((await request(operation, researcher)).status, operation).toBe(401);
  });

  it("covers unknown paths below an authenticated prefix with its auth, as before: 401, then a JSON 404", async () => {
    for (const path of [
      "/v1/studies/study-a/nothing",
      "/v1/study-service/events/study-a/nothing",
      "/v1/study-service/participant/nothing",
    ]) {
      expect((await t.app.request(path)).status, path).toBe(401);
    }
    const researcher = await managementToken(t, "root", true);
    const res = await t.app.request("/v1/studies/study-a/nothing", {
      headers: { Authorization: `Bearer ${researcher}` },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "no route for GET /v1/studies/study-a/nothing" });
  });

  it("leaves the public routes public", async () => {
    const headers = { "X-Forwarded-For": "192.0.2.44" };
    for (const path of [
      "/v1/study-service/temp-participant/register",
      "/v1/password-reset/initiate",
      "/v1/password-reset/reset",
    ]) {
      const res = await postJson(t, path, {}, undefined, "POST", headers);
      expect(res.status, path).toBe(400);
    }
    for (const path of ["/healthz", "/readyz", "/openapi.json", "/docs", "/reset-password", "/metrics", "/console"]) {
      expect((await t.app.request(path)).status, path).toBe(200);
    }
    const unknown = await t.app.request("/v1/password-reset/other", { method: "POST" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "no route for POST /v1/password-reset/other" });
  });
});
