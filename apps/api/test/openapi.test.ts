import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./test-app";

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
    expect(await res.text()).toContain('data-url="/openapi.json"');
  });
});
