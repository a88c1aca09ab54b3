/**
 * The routes the documentation names are the API's: every `METHOD /path` code span in README.md
 * and docs/*.md (`GET|PUT /path` for several methods; `…/path` for the end of a longer path, as
 * the pages abbreviate it) is an operation of the served /openapi.json, parameters compared by
 * position, not by name. docs/benchmarks.md, a record of measurements, is left out. The few paths
 * served outside the OpenAPI document are listed below with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { codeSpans, documents } from "./documents";

const METHODS = "GET|POST|PUT|PATCH|DELETE";
const ROUTE = new RegExp(`^((?:${METHODS})(?:\\|(?:${METHODS}))*) ((?:/|…/)\\S*)`);
/** Measurements as they were taken, not a reference of the API. */
const NOT_CHECKED = new Set(["docs/benchmarks.md"]);
/** Served by the API but deliberately not in its OpenAPI document. */
const OUTSIDE_OPENAPI = new Set([
  "GET /metrics", // Prometheus scrapes it; not part of the API
  "GET /openapi.json", // the document itself
  "GET /docs", // the rendered document
  "GET /console", // the console's static pages
]);

/** `/v1/studies/{studyKey}/rules/{version}?x=1` → `/v1/studies/{}/rules/{}`. */
export function normalisedPath(path: string): string {
  return path.replace(/[?#].*$/, "").replace(/\{[^}]*\}/g, "{}");
}

/** Whether the API serves an operation; `GET …/x` is served when a served GET path ends in `/x`. */
export function isServed(operation: string, served: ReadonlySet<string>): boolean {
  if (served.has(operation)) return true;
  const [method = "", path = ""] = operation.split(" ");
  if (!path.startsWith("…/")) return false;
  const ending = path.slice(1);
  return [...served].some((entry) => entry.startsWith(`${method} /`) && entry.endsWith(ending));
}

/** The operations a code span names: `GET|PUT …/timer` → GET and PUT of a path ending in /timer. */
export function operationsOf(span: string): string[] {
  const match = ROUTE.exec(span);
  if (!match) return [];
  return (match[1] ?? "").split("|").map((method) => `${method} ${normalisedPath(match[2] ?? "")}`);
}

describe("the routes of the documentation", () => {
  let t: TestApp;
  let served: Set<string>;

  beforeAll(async () => {
    t = await createTestApp();
    const response = await t.app.request("/openapi.json");
    expect(response.status).toBe(200);
    const doc = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
    served = new Set(
      Object.entries(doc.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${normalisedPath(path)}`),
      ),
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const named = documents()
    .filter((page) => !NOT_CHECKED.has(page.file))
    .flatMap((page) =>
      codeSpans(page.text).flatMap((span) =>
        operationsOf(span).map((operation) => ({ page: page.file, span, operation })),
      ),
    );

  it("finds the routes of docs/api.md", () => {
    expect(named.filter((entry) => entry.page === "docs/api.md").length).toBeGreaterThan(40);
  });

  it("names only operations the API serves", () => {
    const unknown = named
      .filter(({ operation }) => !isServed(operation, served) && !OUTSIDE_OPENAPI.has(operation))
      .map(({ page, span }) => `${page}: ${span}`);
    expect(unknown).toEqual([]);
  });

  it("serves the paths kept outside the OpenAPI document", async () => {
    for (const operation of OUTSIDE_OPENAPI) {
      expect(served.has(operation), operation).toBe(false);
      const path = operation.split(" ")[1] ?? "";
      const response = await t.app.request(path);
      expect(response.status, path).not.toBe(404);
    }
  });

  it("reads spans as operations", () => {
    expect(operationsOf("GET|PUT …/variables/{key}")).toEqual(["GET …/variables/{}", "PUT …/variables/{}"]);
    expect(operationsOf("GET …/audit-log?limit&cursor")).toEqual(["GET …/audit-log"]);
    const api = new Set(["GET /v1/studies/{}/variables/{}", "PUT /v1/studies/{}/timer"]);
    expect(isServed("GET …/variables/{}", api)).toBe(true);
    expect(isServed("DELETE …/variables/{}", api)).toBe(false);
    expect(isServed("GET …/timer", api)).toBe(false);
    expect(isServed("PUT /v1/studies/{}/timer", api)).toBe(true);
    expect(isServed("PUT /timer", api)).toBe(false);
    expect(operationsOf("POST /v1/study-service/events/{studyKey}/submit")).toEqual([
      "POST /v1/study-service/events/{}/submit",
    ]);
    expect(operationsOf("npm run cli -- help")).toEqual([]);
    expect(operationsOf("GET")).toEqual([]);
  });
});
