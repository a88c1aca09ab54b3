import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFound, Unauthorized } from "@studyflow/domain/errors";
import type { AppEnv } from "../src/app-env";
import { defineRoute } from "../src/routes/define-route";
import { handleError } from "../src/errors";
import { errorResponses } from "../src/routes/openapi-errors";
import { jsonContent, messageSchema } from "../src/routes/schemas";
import { validationHook } from "../src/validation";
import { bearer, managementToken } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/** The app's handler, counting what reaches it: an error answered anywhere else is not counted. */
function countingHandler() {
  const seen: string[] = [];
  const handler = (error: Error, c: Context<AppEnv>) => {
    seen.push(error.message);
    return handleError(error, c);
  };
  return { seen, handler };
}

describe("errors reach HTTP through the app's onError alone", () => {
  it("carries a sub-router's errors (middleware, handler, a router inside a router) to the app's handler", async () => {
    const inner = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
    inner.get("/boom", () => {
      throw new Error("connection string postgres://secret@db");
    });
    const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
    router.use("/guarded/*", async (c, next) => {
      if (c.req.header("authorization") !== "Bearer ok") throw new Unauthorized("missing Authorization header");
      await next();
    });
    defineRoute(
      router,
      {
        method: "get",
        path: "/guarded/{key}",
        request: { params: z.object({ key: z.string() }) },
        bothSlashes: true,
        responses: { 200: jsonContent(messageSchema, "found"), ...errorResponses([401, 404]) },
      },
      (c) => {
        const { key } = c.req.valid("param");
        if (key === "missing") throw new NotFound(`no thing "${key}"`);
        return c.json({ message: key }, 200);
      },
    );
    router.route("/inner", inner);
    const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
    // What app.ts sets before any router: the handler logs an unexpected error with the request id.
    app.use(async (c, next) => {
      c.set("requestId", "req-1");
      c.set("baseLogger", pino({ level: "silent" }));
      await next();
    });
    app.route("/v1", router);
    const { seen, handler } = countingHandler();
    app.onError(handler);

    const found = await app.request("/v1/guarded/a", { headers: { authorization: "Bearer ok" } });
    expect([found.status, await found.json()]).toEqual([200, { message: "a" }]);
    const missing = await app.request("/v1/guarded/missing", { headers: { authorization: "Bearer ok" } });
    expect([missing.status, await missing.json()]).toEqual([404, { error: 'no thing "missing"' }]);
    const anonymous = await app.request("/v1/guarded/a");
    expect([anonymous.status, await anonymous.json()]).toEqual([401, { error: "missing Authorization header" }]);
    const boom = await app.request("/v1/inner/boom");
    expect(boom.status).toBe(500);
    const body = await boom.text();
    expect(JSON.parse(body)).toEqual({ error: "internal error (request id req-1)" });
    expect(body).not.toMatch(/secret|postgres|at /);
    expect(seen).toEqual([
      'no thing "missing"',
      "missing Authorization header",
      "connection string postgres://secret@db",
    ]);
  });

  describe("in the app", () => {
    let t: TestApp;
    let seen: string[];
    beforeAll(async () => {
      t = await createTestApp();
      const counting = countingHandler();
      seen = counting.seen;
      // Replaces the app's handler by one that counts and answers the same: a router that still
      // answered its own errors would leave `seen` short.
      t.app.onError(counting.handler);
    });
    afterAll(async () => {
      await t.close();
    });

    it("answers every router's failures (CASE-shaped ones included) as before, from the one handler", async () => {
      const admin = bearer(await managementToken(t, "error-wiring-admin", true));
      const requests: [string, Record<string, string>, number][] = [
        // management-auth: a route's own auth middleware
        ["/v1/auth/permissions", {}, 401],
        // messaging: the router's auth middleware, then a route handler's domain error
        ["/v1/messaging/scheduled-emails", {}, 401],
        ["/v1/messaging/scheduled-emails/no-such-schedule", admin, 404],
        // data-explorer and data-exporter: a handler's domain error for an unknown study or task
        ["/v1/studies/no-such-study/data-explorer/participants/p03", admin, 404],
        ["/v1/studies/no-such-study/data-exporter/responses/task/no-such-task", admin, 404],
        // user-management: the router's auth middleware, then a handler's not-found
        ["/v1/user-management/management-users", {}, 401],
        ["/v1/user-management/management-users/no-such-user", admin, 404],
        // a studyflow route, which never had a handler of its own
        ["/v1/studies/no-such-study/participants/p1/responses", {}, 401],
      ];
      const answers: [string, number, unknown][] = [];
      for (const [path, headers] of requests) {
        const response = await t.app.request(path, { headers });
        answers.push([path, response.status, await response.json()]);
      }
      expect(answers.map(([path, status]) => [path, status])).toEqual(
        requests.map(([path, , status]) => [path, status]),
      );
      for (const [, , body] of answers) expect(body).toEqual({ error: expect.any(String) });
      expect(seen).toEqual(answers.map(([, , body]) => (body as { error: string }).error));
    });
  });
});
