import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./test-app";

/** Every operation of study configuration, with the error statuses its document must list. */
const OPERATIONS: [operation: string, statuses: string[]][] = [
  ["GET /v1/studies", ["200", "401"]],
  ["GET /v1/studies/{studyKey}", ["200", "400", "401", "403", "404"]],
  ["PATCH /v1/studies/{studyKey}", ["200", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/code-lists", ["200", "400", "401", "403", "404"]],
  ["POST /v1/studies/{studyKey}/code-lists/{listKey}/codes", ["200", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/code-lists/{listKey}/codes", ["200", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/code-lists/{listKey}/count", ["200", "400", "401", "403", "404"]],
  ["DELETE /v1/studies/{studyKey}/code-lists/{listKey}/codes/{code}", ["204", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/variables", ["200", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/variables/{key}", ["200", "400", "401", "403", "404"]],
  ["POST /v1/studies/{studyKey}/variables", ["200", "400", "401", "403", "404", "409"]],
  ["PUT /v1/studies/{studyKey}/variables/{key}", ["200", "400", "401", "403", "404"]],
  ["PUT /v1/studies/{studyKey}/variables/{key}/value", ["200", "400", "401", "403", "404"]],
  ["DELETE /v1/studies/{studyKey}/variables/{key}", ["200", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/rules", ["200", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/rules/{version}", ["200", "400", "401", "403", "404"]],
  ["POST /v1/studies/{studyKey}/rules", ["200", "400", "401", "403", "404"]],
  ["GET /v1/studies/{studyKey}/audit-log", ["200", "400", "401", "403", "404"]],
];

interface OperationDoc {
  security: unknown;
  responses: Record<string, unknown>;
  summary?: string;
  parameters?: { in: string; name: string }[];
}

describe("study configuration in the OpenAPI document and behind management auth", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("documents every operation with management security, its statuses, a summary and its path parameters", async () => {
    const doc = await (await t.app.request("/openapi.json")).json();
    for (const [operation, statuses] of OPERATIONS) {
      const [method, path] = operation.split(" ") as [string, string];
      const documented = doc.paths[path]?.[method.toLowerCase()] as OperationDoc | undefined;
      expect(documented, operation).toBeDefined();
      if (!documented) continue;
      expect(documented.security, operation).toEqual([{ managementBearer: [] }, { serviceApiKey: [] }]);
      expect(Object.keys(documented.responses).sort(), operation).toEqual(statuses);
      expect(documented.summary, operation).toEqual(expect.any(String));
      const pathParameters = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const declared = (documented.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      expect(declared.sort(), operation).toEqual(pathParameters.sort());
    }
    const patch = doc.paths["/v1/studies/{studyKey}"].patch;
    expect(patch.description).toMatch(/inactive/);
    expect(patch.description).toMatch(/409/);
  });

  it("answers 401 with a JSON error on every operation without a token", async () => {
    for (const [operation] of OPERATIONS) {
      const [method, template] = operation.split(" ") as [string, string];
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => (name === "version" ? "current" : `x-${name}`));
      const res = await t.app.request(path, {
        method,
        headers: { "Content-Type": "application/json" },
        ...(method === "GET" || method === "DELETE" ? {} : { body: "{}" }),
      });
      expect(res.status, operation).toBe(401);
      expect(await res.json(), operation).toEqual({ error: "missing Authorization header" });
    }
  });
});
