/**
 * A submitted response's items (ResponseItem, nested to any depth) are checked by a walk of their
 * own instead of a recursive zod schema (routes/schemas.ts). They must answer exactly as the
 * recursive schema did: the same values pass, with the same output (members other than key,
 * value, dtype and items dropped), and the same issues fail, worded alike and at the same paths.
 */
import fc from "fast-check";
import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { describeIssues } from "../src/validation";
import { submittedResponseSchema, type ResponseItem } from "../src/routes/schemas";

/** The recursive zod schema the walk replaced, as it was. */
const recursiveItem: z.ZodType<ResponseItem> = z.lazy(() =>
  z.object({
    key: z.string(),
    value: z.string().optional(),
    dtype: z.string().optional(),
    items: z.array(recursiveItem).optional(),
  }),
);
const recursiveResponse = submittedResponseSchema.extend({
  responses: z
    .array(
      z.object({
        key: z.string().min(1, "response item key must not be empty"),
        meta: z.unknown().optional(),
        response: recursiveItem.optional(),
        confidentialMode: z.string().optional(),
        mapToKey: z.string().optional(),
      }),
    )
    .max(10_000)
    .optional(),
});

/** What a parse answers, as a route passes it on: the output, or the 400's sentence. */
function answer(schema: z.ZodType, body: unknown) {
  const result = schema.safeParse(body);
  return result.success ? { output: result.data } : { error: describeIssues(result.error.issues, "body") };
}

const bodyWith = (response: unknown) => ({ key: "weekly", responses: [{ key: "weekly.Q1", response }] });

/** Item-like values: mostly well formed, with wrong types, missing keys and extra members mixed in. */
const itemLike: fc.Arbitrary<unknown> = fc.letrec<{ item: unknown }>((tie) => ({
  item: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record(
      {
        key: fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null)),
        value: fc.oneof(fc.string({ maxLength: 4 }), fc.boolean()),
        dtype: fc.oneof(fc.constantFrom("string", "date"), fc.integer()),
        items: fc.oneof(
          fc.array(tie("item"), { maxLength: 3 }),
          fc.dictionary(fc.string({ maxLength: 2 }), fc.integer()),
        ),
        extra: fc.jsonValue({ maxDepth: 1 }),
      },
      { requiredKeys: [] },
    ),
    fc.record({ key: fc.string({ maxLength: 4 }), items: fc.array(tie("item"), { maxLength: 3 }) }),
    fc.jsonValue({ maxDepth: 1 }),
  ),
})).item;

describe("a submitted response's items", () => {
  it("pass, fail and come out as they did under the recursive zod schema", () => {
    fc.assert(
      fc.property(itemLike, (response) => {
        expect(answer(submittedResponseSchema, bodyWith(response))).toEqual(
          answer(recursiveResponse, bodyWith(response)),
        );
      }),
      { numRuns: 2_000 },
    );
  });

  it("name each wrong member by its path, as zod words it", () => {
    const error = (response: unknown) => answer(submittedResponseSchema, bodyWith(response)).error;
    expect(error({ key: "rg", items: [{ key: "mcg", items: [{ key: 3 }] }] })).toBe(
      "body.responses.0.response.items.0.items.0.key: Invalid input: expected string, received number",
    );
    expect(error({ key: "rg", value: 2, dtype: false })).toBe(
      "body.responses.0.response.value: Invalid input: expected string, received number; " +
        "body.responses.0.response.dtype: Invalid input: expected string, received boolean",
    );
    expect(error({ key: "rg", items: {} })).toBe(
      "body.responses.0.response.items: Invalid input: expected array, received object",
    );
    expect(error([])).toBe("body.responses.0.response: Invalid input: expected object, received array");
    expect(error({ value: "x" })).toBe(
      "body.responses.0.response.key: Invalid input: expected string, received undefined",
    );
  });

  it("keep their own members only, at every depth", () => {
    const { output } = answer(
      submittedResponseSchema,
      bodyWith({ key: "rg", note: "x", items: [{ key: "mcg", items: [{ key: "fever", value: "", score: 3 }] }] }),
    );
    expect(output).toEqual(bodyWith({ key: "rg", items: [{ key: "mcg", items: [{ key: "fever", value: "" }] }] }));
  });
});
