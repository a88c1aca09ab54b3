import { z } from "@hono/zod-openapi";
import { afterEach, describe, expect, it, vi } from "vitest";
import { handleError } from "../src/errors";
import { limitBodySize } from "../src/middleware/body-size";
import { inputBoundary } from "../src/middleware/input-boundary";
import { requestJson } from "../src/request-json";
import { createRouter } from "../src/routes/create-router";
import { defineRoute } from "../src/routes/define-route";

const schema = z.object({ studyKey: z.string(), items: z.array(z.object({ key: z.string() })) });

/** A router as the app builds it, with a CASE-bodied route and a middleware that reads the body too. */
function app() {
  const router = createRouter();
  router.use(limitBodySize(10_000));
  router.use(inputBoundary());
  let seenByMiddleware: unknown;
  defineRoute(
    router,
    {
      method: "post",
      path: "/things",
      caseBody: schema,
      middleware: [
        async (c, next) => {
          const body = await requestJson(c);
          seenByMiddleware = body.kind === "json" ? body.value : body.kind;
          await next();
        },
      ],
      responses: { 200: { description: "echo" } },
    },
    (c) => c.json({ valid: c.req.valid("json"), seenByMiddleware }, 200),
  );
  router.onError(handleError);
  return router;
}

describe("a request's body is parsed once", () => {
  afterEach(() => vi.restoreAllMocks());

  for (const contentType of ["application/json", "text/plain;charset=UTF-8"]) {
    it(`${contentType}: the boundary, a route middleware, the CASE reader and the validator share one parse`, async () => {
      const text = JSON.stringify({ StudyKey: "s1", ITEMS: [{ Key: "a" }] });
      const parse = vi.spyOn(JSON, "parse");
      const response = await app().request("/things", {
        method: "POST",
        body: text,
        headers: { "content-type": contentType },
      });
      expect(response.status).toBe(200);
      const parsesOfTheBody = parse.mock.calls.filter(([input]) => input === text).length;
      expect(parsesOfTheBody).toBe(1);
      // the validator saw the key-matched body; the middleware before the reader saw the body as sent
      expect(await response.json()).toEqual({
        valid: { studyKey: "s1", items: [{ key: "a" }] },
        seenByMiddleware: { StudyKey: "s1", ITEMS: [{ Key: "a" }] },
      });
    });
  }

  it("the request the server received keeps the Content-Type it arrived with", async () => {
    const request = new Request("http://localhost/things", {
      method: "POST",
      body: JSON.stringify({ studyKey: "s1", items: [] }),
      headers: { "content-type": "text/plain;charset=UTF-8" },
    });
    const response = await app().fetch(request);
    expect(response.status).toBe(200);
    expect(request.headers.get("content-type")).toBe("text/plain;charset=UTF-8");
  });

  it("a body that is no JSON is refused once, naming the body", async () => {
    const response = await app().request("/things", {
      method: "POST",
      body: "{",
      headers: { "content-type": "text/plain" },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "body: not valid JSON" });
  });

  it("an empty body is refused as required", async () => {
    const response = await app().request("/things", {
      method: "POST",
      body: " ",
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "body: required (a JSON document)" });
  });
});
