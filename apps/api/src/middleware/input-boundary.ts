import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { errorBody } from "../errors";

/**
 * The deepest JSON nesting a body may have. The deepest legitimate bodies are rule sets: the
 * engine accepts expressions 64 deep, and each level is three JSON levels (exp, data, argument),
 * so 256 leaves room; survey response items nest a handful of levels. Checked before validation,
 * so no validator ever recurses deeper than this.
 */
export const MAX_JSON_DEPTH = 256;

/** Why a string cannot be accepted: PostgreSQL stores neither NUL nor a lone surrogate. */
function textProblem(text: string): string | null {
  if (text.includes("\u0000")) return "must not contain a NUL character (U+0000)";
  if (!text.isWellFormed()) return "must not contain a lone UTF-16 surrogate";
  return null;
}

/** The first problem of a parsed JSON body, walked without recursion, with the field's path. */
function jsonProblem(body: unknown): string | null {
  const pending: Array<[value: unknown, path: string, depth: number]> = [[body, "body", 0]];
  while (pending.length > 0) {
    const [value, path, depth] = pending.pop() as [unknown, string, number];
    if (typeof value === "string") {
      const problem = textProblem(value);
      if (problem) return `${path} ${problem}`;
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return `body is nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(value)) {
      value.forEach((item, i) => pending.push([item, `${path}[${i}]`, depth + 1]));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const problem = textProblem(key);
      if (problem) return `a key of ${path} ${problem}`;
      pending.push([item, `${path}.${key}`, depth + 1]);
    }
  }
  return null;
}

function pathProblem(rawPath: string): string | null {
  for (const segment of rawPath.split("/")) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return `path segment "${segment.slice(0, 40)}" is not valid percent-encoded UTF-8`;
    }
    const problem = textProblem(decoded);
    if (problem) return `path segment ${problem}`;
  }
  return null;
}

function queryProblem(url: string): string | null {
  const query = new URL(url).searchParams;
  for (const [name, value] of query) {
    const nameProblem = textProblem(name);
    if (nameProblem) return `a query parameter name ${nameProblem}`;
    const problem = textProblem(value);
    if (problem) return `query.${name} ${problem}`;
  }
  return null;
}

const isJson = (contentType: string | undefined) => /^application\/(?:[\w.+-]*\+)?json\b/i.test(contentType ?? "");

/**
 * One check at the edge for every request: path parameters, query values and every string of a
 * JSON body (keys too) may hold no NUL and no lone surrogate, and a body nests at most
 * MAX_JSON_DEPTH levels. A violation is a 400 naming the field, before any validator, handler or
 * query sees the input. A body that is no JSON at all is left to the route's validator.
 */
export function inputBoundary() {
  return createMiddleware<AppEnv>(async (c, next) => {
    const problem = pathProblem(new URL(c.req.url).pathname) ?? queryProblem(c.req.url);
    if (problem) return c.json(errorBody(problem), 400);
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && isJson(c.req.header("content-type"))) {
      // Hono caches the text, so the route's validator reads the same body again without a second stream.
      const text = await c.req.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const bodyProblem = body === undefined ? null : jsonProblem(body);
      if (bodyProblem) return c.json(errorBody(bodyProblem), 400);
    }
    await next();
  });
}
