import http from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "@studyflow/db";
import { createEmptyDatabase } from "@studyflow/testkit";
import { mintManagementToken } from "@studyflow/domain/access";
import { createTestApp, type TestApp } from "./test-app";

describe("health", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("healthz answers while the process lives", async () => {
    const res = await t.app.request("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("readyz is 200 when Postgres and Redis answer", async () => {
    const res = await t.app.request("/readyz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready" });
  });

  it("every response carries a request id, and a sane incoming one is kept", async () => {
    const res = await t.app.request("/healthz", { headers: { "X-Request-Id": "abc-123" } });
    expect(res.headers.get("x-request-id")).toBe("abc-123");
    const other = await t.app.request("/healthz", { headers: { "X-Request-Id": "bad id with spaces" } });
    expect(other.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("served over HTTP, every answer carries one request id: a success, a 404, a 401, a 400", async () => {
    const server = await new Promise<http.Server>((resolve) => {
      const started = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
        resolve(started as http.Server),
      );
    });
    try {
      const { port } = server.address() as AddressInfo;
      const get = (path: string, headers: Record<string, string> = {}, method = "GET", body?: string) =>
        new Promise<{ status: number; ids: string[] }>((resolve, reject) => {
          const req = http.request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
            res.resume();
            // every X-Request-Id line of the answer's head
            const ids = res.rawHeaders.filter(
              (_, index, all) => index % 2 === 1 && /^x-request-id$/i.test(all[index - 1]!),
            );
            res.on("end", () => resolve({ status: res.statusCode ?? 0, ids }));
          });
          req.on("error", reject);
          req.end(body);
        });
      expect(await get("/healthz", { "X-Request-Id": "abc-123" })).toEqual({ status: 200, ids: ["abc-123"] });
      const fresh = await get("/healthz", { "X-Request-Id": "bad id with spaces" });
      expect(fresh.ids).toHaveLength(1);
      expect(fresh.ids[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(await get("/v1/nothing-here", { "X-Request-Id": "r-404" })).toEqual({ status: 404, ids: ["r-404"] });
      expect(await get("/v1/studies", { "X-Request-Id": "r-401" })).toEqual({ status: 401, ids: ["r-401"] });
      expect(
        await get("/v1/auth/login", { "X-Request-Id": "r-400", "Content-Type": "application/json" }, "POST", "{}"),
      ).toEqual({ status: 400, ids: ["r-400"] });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("unknown routes get a JSON 404", async () => {
    const res = await t.app.request("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "no route for GET /v1/nothing-here" });
  });
});

describe("an unexpected failure", () => {
  let t: TestApp;
  let empty: Awaited<ReturnType<typeof createEmptyDatabase>>;
  beforeAll(async () => {
    // A database without the schema: every query fails with a PostgreSQL error that names tables.
    empty = await createEmptyDatabase();
    t = await createTestApp({ databaseOverride: createDb(empty.url, { max: 1 }) });
  });
  afterAll(async () => {
    await t.close();
    await empty.drop();
  });

  it("is a 500 naming the request id, with no SQL or stack in the body", async () => {
    const admin = await mintManagementToken({
      now: Date.now(),
      subject: "root",
      isAdmin: true,
      secret: t.config.MANAGEMENT_JWT_SECRET,
    });
    const res = await t.app.request("/v1/studies/any/track-account", {
      method: "PUT",
      headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json", "X-Request-Id": "req-42" },
      body: JSON.stringify({ trackAccount: true }),
    });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({ error: "internal error (request id req-42)" });
  });
});

describe("readiness with an unreachable database", () => {
  let t: TestApp;
  beforeAll(async () => {
    // Port 1 on loopback refuses at once: the database "is down".
    t = await createTestApp({ databaseOverride: createDb("postgres://postgres@127.0.0.1:1/none", { max: 1 }) });
  });
  afterAll(async () => {
    await t.close();
  });

  it("readyz is 503 naming the dependency", async () => {
    const res = await t.app.request("/readyz");
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "not ready: postgres unavailable" });
  });
});
