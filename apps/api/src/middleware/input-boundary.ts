import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { inputTextProblem, jsonInputProblem } from "@studyflow/engine";
import type { AppEnv } from "../app-env";
import { errorBody } from "../errors";
import { requestJson } from "../request-json";

/**
 * The deepest JSON nesting a body may have. The deepest legitimate bodies are rule sets: the
 * engine accepts expressions 64 deep, and each level is three JSON levels (exp, data, argument),
 * so 256 leaves room; survey response items nest a handful of levels. Checked before validation,
 * so no validator ever recurses deeper than this.
 */
export const MAX_JSON_DEPTH = 256;

function pathProblem(rawPath: string): string | null {
  for (const segment of rawPath.split("/")) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return `path segment "${segment.slice(0, 40)}" is not valid percent-encoded UTF-8`;
    }
    const problem = inputTextProblem(decoded);
    if (problem) return `path segment ${problem}`;
  }
  return null;
}

function queryProblem(query: URLSearchParams): string | null {
  for (const [name, value] of query) {
    const nameProblem = inputTextProblem(name);
    if (nameProblem) return `a query parameter name ${nameProblem}`;
    const problem = inputTextProblem(value);
    if (problem) return `query.${name} ${problem}`;
  }
  return null;
}

/**
 * The path's and the query's problems. The common request, a path without percent-escapes and no
 * query, needs no parsing: a path that arrived as bytes cannot hold a NUL (the HTTP parser refuses
 * it) or a lone surrogate (bytes decode to whole characters), only an escape can.
 */
function urlProblem(href: string): string | null {
  const pathStart = href.indexOf("/", href.indexOf("//") + 2);
  const queryStart = href.indexOf("?", pathStart);
  const path = queryStart === -1 ? href.slice(pathStart) : href.slice(pathStart, queryStart);
  if (queryStart === -1 && !path.includes("%")) return null;
  const url = new URL(href);
  return pathProblem(url.pathname) ?? queryProblem(url.searchParams);
}

const isJson = (contentType: string | undefined) => /^application\/(?:[\w.+-]*\+)?json\b/i.test(contentType ?? "");

export interface InputBoundaryOptions {
  /**
   * Requests whose body this check leaves unread: routes that bound and read their own body after
   * authenticating the caller (the participant file upload), so that no body reaches past its
   * limit or is read before its sender is known. Their path and query are checked all the same.
   */
  bodyLeftToRoute?: (c: Context<AppEnv>) => boolean;
}

/**
 * One check at the edge for every request: path parameters, query values and every string of a
 * JSON body (keys too) may hold no NUL and no lone surrogate, and a body nests at most
 * MAX_JSON_DEPTH levels. A violation is a 400 naming the field, before any validator, handler or
 * query sees the input. A body that is no JSON at all is left to the route's validator. The body
 * must be bounded before this runs (limitBodySize): it is read whole here.
 */
export function inputBoundary(options: InputBoundaryOptions = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const problem = urlProblem(c.req.url);
    if (problem) return c.json(errorBody(problem), 400);
    if (
      c.req.method !== "GET" &&
      c.req.method !== "HEAD" &&
      isJson(c.req.header("content-type")) &&
      options.bodyLeftToRoute?.(c) !== true
    ) {
      // Parsed once for the whole request: every later reader, the route's validator too, takes this parse.
      const body = await requestJson(c);
      const bodyProblem =
        body.kind !== "json"
          ? null
          : jsonInputProblem(body.value, "body", {
              maxDepth: MAX_JSON_DEPTH,
              tooDeep: `body is nested deeper than ${MAX_JSON_DEPTH} levels`,
            });
      if (bodyProblem) return c.json(errorBody(bodyProblem), 400);
    }
    await next();
  });
}
