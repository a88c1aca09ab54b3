import type { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { jsonInputProblem } from "@studyflow/engine";
import type { AppEnv } from "../app-env";
import { errorBody } from "../errors";
import { MAX_JSON_DEPTH } from "../middleware/input-boundary";
import { replaceRequestJson, requestJson } from "../request-json";
import { matchKeysToSchema } from "./key-matching";

/**
 * Reads a CASE client's JSON body whatever its Content-Type says: case-admin and the participant
 * apps send `text/plain;charset=UTF-8` (a fetch with a string body), no type at all, or
 * application/json, and case-backend (gin's ShouldBindJSON) parses them all as JSON. The body is
 * checked as the input boundary checks JSON bodies (no NUL, no lone surrogate, bounded depth; the
 * boundary skips bodies that do not call themselves JSON), its keys are matched to the schema's
 * case-insensitively (see key-matching.ts), and the request goes on as application/json with the
 * matched body, so the route's own zod validator checks it and the OpenAPI document shows it.
 * The body is parsed once (requestJson); the validator takes the matched value without parsing.
 * The body-size limit ran before this (app.ts).
 */
export function caseJsonReader(schema: z.ZodType): MiddlewareHandler<AppEnv> {
  return createMiddleware<AppEnv>(async (c, next) => {
    const body = await requestJson(c);
    if (body.kind === "blank") return c.json(errorBody("body: required (a JSON document)"), 400);
    if (body.kind === "invalid") return c.json(errorBody("body: not valid JSON"), 400);
    const problem = jsonInputProblem(body.value, "body", {
      maxDepth: MAX_JSON_DEPTH,
      tooDeep: `body is nested deeper than ${MAX_JSON_DEPTH} levels`,
    });
    if (problem) return c.json(errorBody(problem), 400);
    replaceRequestJson(c, matchKeysToSchema(body.value, schema));
    await next();
  });
}

/**
 * A CASE-shaped route's body: the `request.body` entry for createRoute (documented as JSON) and
 * the middleware that makes any CASE client's body acceptable to it. Use both:
 * `createRoute({ ..., middleware: [caseBody.middleware], request: { body: caseBody.body } })`.
 */
export function caseJsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return {
    body: {
      required: true,
      description:
        (description ? `${description}. ` : "") +
        "Read as JSON whatever the Content-Type (text/plain as CASE clients send it, too); keys match the " +
        "schema's case-insensitively, as case-backend's decoder matches them.",
      content: { "application/json": { schema } },
    },
    middleware: caseJsonReader(schema),
  };
}
