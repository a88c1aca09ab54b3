import { z } from "@hono/zod-openapi";
import { describe, expect, it, vi } from "vitest";
import { createRouter } from "../src/routes/create-router";
import { defineRoute, parsedSynchronously } from "../src/routes/define-route";
import { jsonBody, jsonContent, submittedResponseSchema } from "../src/routes/schemas";

const TAKEN = new Set(["taken"]);

/** An async refinement: zod's synchronous parse cannot run it. */
const nameBody = z.object({
  name: z
    .string()
    .min(1)
    .refine(async (name) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return !TAKEN.has(name);
    }, "name is taken"),
});

function appWith() {
  const router = createRouter();
  defineRoute(
    router,
    {
      method: "post",
      path: "/things/{id}",
      request: { params: z.object({ id: z.string().regex(/^\d+$/, "digits only") }), body: jsonBody(nameBody) },
      responses: { 200: jsonContent(z.object({ id: z.string(), name: z.string() }), "made") },
    },
    (c) => c.json({ id: c.req.valid("param").id, name: c.req.valid("json").name }, 200),
  );
  return router;
}

const post = (app: ReturnType<typeof appWith>, path: string, body: unknown) =>
  app.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("request validation as defineRoute serves it (zod's synchronous parse)", () => {
  it("answers as zod's async parse does for valid and invalid survey responses", async () => {
    const served = parsedSynchronously(submittedResponseSchema);
    const expected = [];
    const samples = [
      { key: "weekly", responses: [{ key: "weekly.Q1", response: { key: "rg", items: [{ key: "a" }] } }] },
      { key: "", responses: [] },
      { key: "weekly", submittedAt: -1 },
      { responses: "none" },
      null,
    ];
    for (const sample of samples) expected.push(await submittedResponseSchema.safeParseAsync(sample));
    // the schema's own async parse is not what runs
    const asyncParse = vi.spyOn(submittedResponseSchema, "safeParseAsync");
    try {
      for (const [index, sample] of samples.entries()) {
        const sync = await served.safeParseAsync(sample);
        expect(sync.success).toBe(expected[index]!.success);
        expect(sync.data).toEqual(expected[index]!.data);
        expect(sync.error?.issues).toEqual(expected[index]!.error?.issues);
      }
      expect(asyncParse).not.toHaveBeenCalled();
    } finally {
      asyncParse.mockRestore();
    }
  });

  it("still runs a schema's async refinements, asynchronously", async () => {
    const app = appWith();
    const made = await post(app, "/things/12", { name: "free" });
    expect(made.status).toBe(200);
    expect(await made.json()).toEqual({ id: "12", name: "free" });
    const taken = await post(app, "/things/12", { name: "taken" });
    expect(taken.status).toBe(400);
    expect(((await taken.json()) as { error: string }).error).toBe("body.name: name is taken");
  });

  it("refuses bad path parameters and bodies with the field named, before the handler", async () => {
    const app = appWith();
    const badParam = await post(app, "/things/x1", { name: "free" });
    expect(badParam.status).toBe(400);
    expect(((await badParam.json()) as { error: string }).error).toBe("param.id: digits only");
    const badBody = await post(app, "/things/1", { name: "" });
    expect(badBody.status).toBe(400);
    expect(((await badBody.json()) as { error: string }).error).toMatch(/^body\.name: /);
  });

  it("documents the route once, with its schemas as declared", () => {
    const app = appWith();
    const paths = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } }).paths ?? {};
    expect(Object.keys(paths)).toEqual(["/things/{id}"]);
    const operation = paths["/things/{id}"]?.post;
    expect(operation?.parameters?.map((parameter) => ("name" in parameter ? parameter.name : undefined))).toEqual([
      "id",
    ]);
    expect(operation?.requestBody).toBeDefined();
  });
});
