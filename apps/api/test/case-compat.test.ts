import { OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { Invalid, NotFound } from "@studyflow/domain/errors";
import type { AppEnv } from "../src/app-env";
import { casePageQuery, casePagination, matchKeysToSchema } from "../src/case-compat";
import { handleError } from "../src/errors";
import { limitBodySize } from "../src/middleware/body-size";
import { inputBoundary } from "../src/middleware/input-boundary";
import { defineRoute } from "../src/routes/define-route";
import { validationHook } from "../src/validation";

const bodySchema = z.object({
  instanceId: z.string().min(1),
  studyKey: z.string(),
  survey: z.object({ versionId: z.string(), items: z.array(z.object({ itemKey: z.string() })).optional() }).optional(),
  labels: z.record(z.string(), z.object({ text: z.string() })).optional(),
});

/** A CASE-shaped route on a router like the app's: the body limit and input boundary before it. */
function caseApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(limitBodySize(1_000));
  app.use(inputBoundary());
  defineRoute(
    app,
    {
      method: "post",
      path: "/things",
      caseBody: bodySchema,
      bodyDescription: "the thing",
      responses: { 200: { description: "echo" } },
    },
    (c) => c.json(c.req.valid("json"), 200),
  );
  defineRoute(
    app,
    {
      method: "get",
      path: "/pages/",
      request: { query: casePageQuery },
      bothSlashes: true,
      responses: { 200: { description: "page" } },
    },
    (c) => c.json(c.req.valid("query"), 200),
  );
  app.get("/fail/:kind", (c) => {
    throw c.req.param("kind") === "missing" ? new NotFound("no such response") : new Invalid("filter: bad");
  });
  app.onError(handleError);
  return app;
}

const post = (body: string, contentType?: string) =>
  caseApp().request("/things", {
    method: "POST",
    body,
    headers: contentType === undefined ? {} : { "content-type": contentType },
  });

describe("CASE JSON body reader", () => {
  const valid = JSON.stringify({ instanceId: "i1", studyKey: "s1" });
  for (const contentType of [
    "text/plain;charset=UTF-8",
    undefined,
    "application/json",
    "application/x-www-form-urlencoded",
  ]) {
    it(`reads JSON sent as ${contentType ?? "no Content-Type"} (never 415)`, async () => {
      const response = await post(valid, contentType);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ instanceId: "i1", studyKey: "s1" });
    });
  }

  it("matches keys case-insensitively at every level, as Go's decoder does", async () => {
    const response = await post(
      JSON.stringify({
        InstanceID: "i1",
        STUDYKEY: "s1",
        Survey: { versionID: "v1", Items: [{ ITEMKEY: "q1" }] },
        labels: { Keep: { Text: "x" } },
      }),
      "text/plain",
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      instanceId: "i1",
      studyKey: "s1",
      survey: { versionId: "v1", items: [{ itemKey: "q1" }] },
      // record keys are data, not fields: kept as sent
      labels: { Keep: { text: "x" } },
    });
  });

  it("lets the last of two keys naming one field win, as Go does", () => {
    expect(matchKeysToSchema({ instanceId: "a", INSTANCEID: "b", studyKey: "s" }, bodySchema)).toEqual({
      instanceId: "b",
      studyKey: "s",
    });
  });

  it("400s naming the field after matching, with the project's readable message", async () => {
    const response = await post(JSON.stringify({ InstanceId: "", studyKey: 3 }), "text/plain");
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: string };
    expect(error).toContain("body.instanceId");
    expect(error).toContain("body.studyKey");
  });

  it("400s on a body that is not JSON, or none, whatever the Content-Type", async () => {
    for (const contentType of ["text/plain", "application/json", undefined]) {
      const bad = await post("{instanceId:", contentType);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual({ error: "body: not valid JSON" });
    }
    const empty = await post("", "text/plain");
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: string }).error).toMatch(/^body: required/);
  });

  it("checks text/plain bodies as the input boundary checks JSON ones", async () => {
    const nul = await post(JSON.stringify({ instanceId: "a\u0000b", studyKey: "s" }), "text/plain");
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { error: string }).error).toMatch(/^body\.instanceId/);
    const deep = await post("[".repeat(300) + "]".repeat(300), "text/plain");
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: string }).error).toMatch(/nested deeper/);
  });

  it("keeps the body-size limit", async () => {
    const response = await post(JSON.stringify({ instanceId: "x".repeat(2_000), studyKey: "s" }), "text/plain");
    expect(response.status).toBe(413);
  });

  it("documents the body as JSON in the OpenAPI document", () => {
    const app = caseApp();
    const document = app.getOpenAPIDocument({ openapi: "3.0.0", info: { title: "t", version: "1" } });
    const operation = document.paths["/things"]?.post as { requestBody?: { content: Record<string, unknown> } };
    expect(Object.keys(operation.requestBody?.content ?? {})).toEqual(["application/json"]);
    // the trailing-slash twin is served but not documented
    expect(Object.keys(document.paths)).toEqual(["/things", "/pages/"]);
  });
});

describe("CASE page and limit", () => {
  const get = (query: string, path = "/pages/") => caseApp().request(`${path}${query}`);
  it("defaults, clamps and reads as case-backend does, at both slashes", async () => {
    expect(await (await get("")).json()).toEqual({ page: 1, limit: 10 });
    expect(await (await get("", "/pages")).json()).toEqual({ page: 1, limit: 10 });
    expect(await (await get("?page=3&limit=25")).json()).toEqual({ page: 3, limit: 25 });
    expect(await (await get("?page=0&limit=0")).json()).toEqual({ page: 1, limit: 10 });
    expect(await (await get("?page=-4&limit=-1")).json()).toEqual({ page: 1, limit: 10 });
    expect(await (await get("?page=%2B2&limit=5000")).json()).toEqual({ page: 2, limit: 1000 });
  });
  it("400s naming page or limit when they are not whole numbers", async () => {
    for (const [query, name] of [
      ["?page=abc", "page"],
      ["?page=1.5", "page"],
      ["?limit=1e3", "limit"],
      ["?limit=", "limit"],
      ["?page=99999999999999999999", "page"],
    ] as const) {
      const response = await get(query);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain(`query.${name}`);
    }
  });
  it("computes pagination with case-backend's arithmetic", () => {
    // case-backend's own table for the page count (pkg/db/study/utils_test.go), limit 0 aside
    expect(casePagination(10, 1, 10).totalPages).toBe(1);
    expect(casePagination(10, 1, 5).totalPages).toBe(2);
    expect(casePagination(10, 1, 3).totalPages).toBe(4);
    expect(casePagination(10, 1, 1).totalPages).toBe(10);
    expect(casePagination(0, 1, 10).totalPages).toBe(0);
    // fewer rows than a page: page 1 whatever was asked
    expect(casePagination(7, 3, 10)).toEqual({ totalCount: 7, currentPage: 1, totalPages: 1, pageSize: 10 });
    // past the last page: kept (the page is empty), as case-backend keeps it
    expect(casePagination(25, 9, 10)).toEqual({ totalCount: 25, currentPage: 9, totalPages: 3, pageSize: 10 });
    expect(casePagination(10, 1, 10)).toEqual({ totalCount: 10, currentPage: 1, totalPages: 1, pageSize: 10 });
    // the keys in case-backend's order
    expect(Object.keys(casePagination(1, 1, 1))).toEqual(["totalCount", "currentPage", "totalPages", "pageSize"]);
  });
});

describe("CASE error statuses", () => {
  it("answers domain errors with {error} and the documented status", async () => {
    const missing = await caseApp().request("/fail/missing");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "no such response" });
    const bad = await caseApp().request("/fail/bad");
    expect(bad.status).toBe(400);
  });
});
