import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./test-app";

interface OperationDoc {
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { description?: string; content?: Record<string, unknown> };
}

describe("OpenAPI document", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("is served as OpenAPI 3.1 with every operation, security schemes and error statuses", async () => {
    const res = await t.app.request("/openapi.json");
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        "POST /v1/studies/{studyKey}/participants/{participantID}/responses",
        "POST /v1/studies/{studyKey}/run-actions/participants/",
        "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}",
        "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/result",
        "POST /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/cancel",
        "GET /v1/studies/{studyKey}/run-actions/participants/task/{taskID}/events",
        "POST /v1/password-reset/reset",
        "POST /v1/password-reset/initiate",
        "POST /v1/study-service/events/{studyKey}/merge-temporary-participant",
        "POST /v1/study-service/events/{studyKey}/leave",
        "POST /v1/study-service/events/{studyKey}/enter",
        "POST /v1/study-service/temp-participant/register",
        "PUT /v1/studies/{studyKey}/track-account",
        "GET /healthz",
        "GET /readyz",
      ]),
    );
    expect(Object.keys(doc.components.securitySchemes)).toEqual([
      "managementBearer",
      "participantBearer",
      "serviceApiKey",
    ]);
    const submit = doc.paths["/v1/studies/{studyKey}/participants/{participantID}/responses"].post;
    expect(Object.keys(submit.responses).sort()).toEqual(["200", "400", "401", "403", "404", "409", "422"]);
    expect(submit.security).toEqual([{ managementBearer: [] }, { serviceApiKey: [] }]);
    expect(doc.components.schemas).toHaveProperty("ResponseItem");
    const reset = doc.paths["/v1/password-reset/reset"].post;
    expect(reset.security ?? []).toEqual([]);
  });

  it("documents case-backend's participant API: its routes, their security, CASE bodies, Idempotency-Key", async () => {
    const doc = await (await t.app.request("/openapi.json")).json();
    const paths = doc.paths as Record<string, Record<string, OperationDoc>>;
    const operations = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ id: `${method.toUpperCase()} ${path}`, operation })),
    );
    const byId = new Map(operations.map(({ id, operation }) => [id, operation]));
    const participant = [{ participantBearer: [] }];
    const expected: Record<string, "public" | "participant"> = {
      "POST /v1/auth/signup": "public",
      "POST /v1/auth/login": "public",
      "POST /v1/auth/token/renew": "participant",
      "POST /v1/auth/logout": "participant",
      "GET /v1/auth/otp": "participant",
      "POST /v1/auth/otp/verify": "participant",
      "POST /v1/auth/verify-email": "public",
      "POST /v1/auth/resend-email-verification": "participant",
      "POST /v1/auth/temptoken-info": "public",
      "POST /v1/auth/login-with-temptoken": "public",
      "POST /v1/password-reset/initiate": "public",
      "POST /v1/password-reset/get-infos": "public",
      "POST /v1/password-reset/reset": "public",
      "GET /v1/user": "participant",
      "DELETE /v1/user": "participant",
      "POST /v1/user/profiles": "participant",
      "PUT /v1/user/profiles": "participant",
      "POST /v1/user/profiles/remove": "participant",
      "POST /v1/user/password": "participant",
      "POST /v1/user/change-account-email": "participant",
      "PUT /v1/user/contact-preferences": "participant",
      "POST /v1/unsubscribe-newsletter": "public",
      "GET /v1/study-service/studies": "public",
      "GET /v1/study-service/studies/participating": "participant",
      "GET /v1/study-service/studies/{studyKey}": "public",
      "GET /v1/study-service/studies/{studyKey}/variables": "public",
      "GET /v1/study-service/participant-data/{studyKey}/surveys": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/survey/{surveyKey}": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/participant-state": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/submission-history": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/responses": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/confidential-response": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/linking-code": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/reports": "participant",
      "POST /v1/study-service/participant-data/{studyKey}/files": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/files": "participant",
      "GET /v1/study-service/participant-data/{studyKey}/files/{fileID}": "participant",
      "DELETE /v1/study-service/participant-data/{studyKey}/files/{fileID}": "participant",
      "POST /v1/study-service/temp-participant/register": "public",
      "GET /v1/study-service/temp-participant/survey": "public",
      "POST /v1/study-service/temp-participant/submit-response": "public",
    };
    for (const [id, security] of Object.entries(expected)) {
      const operation = byId.get(id);
      expect(operation, id).toBeDefined();
      expect(operation!.security ?? [], id).toEqual(security === "public" ? [] : participant);
    }
    // the participant apps send JSON as text/plain: every JSON body of the participant API says it is read so
    const participantApi = [
      "/v1/auth/",
      "/v1/password-reset/",
      "/v1/user",
      "/v1/unsubscribe-newsletter",
      "/v1/study-service/",
    ];
    for (const { id, operation } of operations) {
      const body = operation.requestBody;
      if (!body?.content?.["application/json"] || !participantApi.some((p) => id.split(" ")[1]!.startsWith(p)))
        continue;
      expect(body.description ?? "", id).toContain("whatever the Content-Type");
    }
    // safe retries: the event routes and the management submit take an optional Idempotency-Key
    for (const id of [
      "POST /v1/study-service/events/{studyKey}/enter",
      "POST /v1/study-service/events/{studyKey}/leave",
      "POST /v1/study-service/events/{studyKey}/merge-temporary-participant",
      "POST /v1/study-service/events/{studyKey}/submit",
      "POST /v1/study-service/events/{studyKey}/custom",
      "POST /v1/studies/{studyKey}/participants/{participantID}/responses",
    ]) {
      const headers = (byId.get(id)?.parameters ?? []).filter((p) => p.in === "header");
      expect(
        headers.map((p) => [p.name.toLowerCase(), p.required ?? false]),
        id,
      ).toEqual([["idempotency-key", false]]);
    }
  });

  it("validates against the OpenAPI 3.1 schema", async () => {
    const doc = await (await t.app.request("/openapi.json")).json();
    const validator = new Validator();
    const outcome = await validator.validate(doc);
    expect(outcome.errors ?? []).toEqual([]);
    expect(outcome.valid).toBe(true);
  });

  it("has a reference page", async () => {
    const res = await t.app.request("/docs");
    expect(res.status).toBe(200);
    const html = await res.text();
    // The viewer comes from this API, not a CDN (e2e/test/console/api-docs.test.ts loads it in a browser).
    expect(html).toContain('"url": "/openapi.json"');
    expect(html).toMatch(/<script src="\/docs\/assets\/[^"]+\.js"/);
    expect(html).not.toMatch(/https?:\/\//);
  });
});
