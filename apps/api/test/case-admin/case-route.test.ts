import { OpenAPIHono, z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { describe, expect, it } from "vitest";
import { NotFound, Unauthorized } from "@studyflow/domain/errors";
import type { AppEnv } from "../../src/app-env";
import { defineRoute } from "../../src/routes/define-route";
import { handleError } from "../../src/errors";
import { errorResponses } from "../../src/routes/openapi-errors";
import { jsonContent, messageSchema } from "../../src/routes/schemas";
import { validationHook } from "../../src/validation";

/** A router with two CASE routes as a WP writes them, mounted as app.ts mounts routers. */
function appWithCaseRoutes() {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const seen: string[] = [];
  const requireToken = createMiddleware<AppEnv>(async (c, next) => {
    if (c.req.header("authorization") !== "Bearer ok") throw new Unauthorized("missing Authorization header");
    await next();
  });
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/status",
      summary: "set a status",
      request: { params: z.object({ studyKey: z.string() }) },
      middleware: [requireToken],
      caseBody: z.object({ status: z.enum(["active", "inactive"]), studyKey: z.string().optional() }),
      bothSlashes: true,
      responses: { 200: jsonContent(messageSchema, "done"), ...errorResponses([400, 401, 404]) },
    },
    (c) => {
      const { studyKey } = c.req.valid("param");
      // typed from the body schema: the handler reads what the schema says
      const status: "active" | "inactive" = c.req.valid("json").status;
      if (studyKey === "missing") throw new NotFound(`study "${studyKey}" not found`);
      seen.push(`${studyKey}:${status}`);
      return c.json({ message: `study status updated to ${status}` }, 200);
    },
  );
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/counters/{scope}",
      summary: "no body (CASE's PUT study-counters)",
      request: { params: z.object({ studyKey: z.string(), scope: z.string() }) },
      responses: { 200: jsonContent(z.object({ value: z.number() }), "the value") },
    },
    (c) => c.json({ value: c.req.valid("param").scope.length }, 200),
  );
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.route("/v1/studies", router);
  // as app.ts: a middleware's error (auth) and a handler's both reach the app's handler
  app.onError(handleError);
  app.doc("/doc", { openapi: "3.0.0", info: { title: "t", version: "1" } });
  return { app, seen };
}

const put = (app: OpenAPIHono<AppEnv>, path: string, body?: string, headers: Record<string, string> = {}) =>
  app.request(path, {
    method: "PUT",
    headers: { authorization: "Bearer ok", ...headers },
    ...(body === undefined ? {} : { body }),
  });

describe("defineRoute (a CASE route)", () => {
  it("reads a text/plain body with Go-style keys, at both trailing-slash forms", async () => {
    const { app, seen } = appWithCaseRoutes();
    const plain = await put(app, "/v1/studies/flu/status", JSON.stringify({ Status: "active" }), {
      "content-type": "text/plain;charset=UTF-8",
    });
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual({ message: "study status updated to active" });
    const slashed = await put(app, "/v1/studies/flu/status/", JSON.stringify({ STATUS: "inactive" }));
    expect(slashed.status).toBe(200);
    const typed = await put(app, "/v1/studies/flu/status", JSON.stringify({ status: "active" }), {
      "content-type": "application/json",
    });
    expect(typed.status).toBe(200);
    expect(seen).toEqual(["flu:active", "flu:inactive", "flu:active"]);
  });

  it("answers bad bodies 400 naming the problem, and nothing runs", async () => {
    const { app, seen } = appWithCaseRoutes();
    const cases: [string | undefined, RegExp][] = [
      [undefined, /body: required/],
      ["", /body: required/],
      ["{not json", /body: not valid JSON/],
      [JSON.stringify({ status: "paused" }), /status/],
      [JSON.stringify({}), /status/],
      ["[1,2]", /expected object|object/i],
    ];
    for (const [body, message] of cases) {
      const response = await put(app, "/v1/studies/flu/status", body);
      expect(response.status).toBe(400);
      const answer = (await response.json()) as { error: string };
      expect(answer.error).toMatch(message);
    }
    expect(seen).toEqual([]);
  });

  it("runs the route's middleware before reading the body: 401, not 400", async () => {
    const { app } = appWithCaseRoutes();
    const response = await app.request("/v1/studies/flu/status", { method: "PUT", body: "{not json" });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "missing Authorization header" });
  });

  it("answers domain errors as CASE routes do: their status and {error}", async () => {
    const { app } = appWithCaseRoutes();
    const response = await put(app, "/v1/studies/missing/status", JSON.stringify({ status: "active" }));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'study "missing" not found' });
  });

  it("takes no body where the config names none, and keeps one path when asked", async () => {
    const { app } = appWithCaseRoutes();
    const empty = await put(app, "/v1/studies/flu/counters/abc");
    expect(empty.status).toBe(200);
    expect(await empty.json()).toEqual({ value: 3 });
    expect((await put(app, "/v1/studies/flu/counters/abc/")).status).toBe(404);
  });

  it("documents the body as JSON and hides the slashed twin", async () => {
    const { app } = appWithCaseRoutes();
    const doc = (await (await app.request("/doc")).json()) as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, unknown>; description?: string } }>
      >;
    };
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/v1/studies/{studyKey}/counters/{scope}",
      "/v1/studies/{studyKey}/status",
    ]);
    const body = doc.paths["/v1/studies/{studyKey}/status"]?.put?.requestBody;
    expect(Object.keys(body?.content ?? {})).toEqual(["application/json"]);
    expect(body?.description).toMatch(/text\/plain/);
    expect(doc.paths["/v1/studies/{studyKey}/counters/{scope}"]?.put?.requestBody).toBeUndefined();
  });
});
