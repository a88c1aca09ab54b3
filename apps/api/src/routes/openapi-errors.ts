import { z } from "@hono/zod-openapi";

/** The body of every error answer, whatever its status. */
export const errorSchema = z.object({ error: z.string() }).openapi("Error");

/** The statuses an operation can answer with an error body (see errors.ts for where each comes from). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

/** What a status means when an operation has nothing more precise to say. */
const GENERAL_MEANING: Record<ErrorStatus, string> = {
  400: "invalid input",
  401: "missing, malformed, expired or wrong-type token",
  403: "the token's subject lacks the right for this resource",
  404: "not found",
  409: "the resource is not in a state that allows this",
  413: "request body too large",
  415: "request body is not JSON",
  422: "the study's rules failed",
  429: "too many requests",
  500: "internal error",
  503: "a dependency is unavailable",
};

interface ErrorResponse {
  description: string;
  content: { "application/json": { schema: typeof errorSchema } };
  headers?: { "Retry-After": { description: string; schema: { type: "integer"; minimum: number } } };
}

/**
 * The error entries of an operation's `responses`: the statuses it can answer, each with the
 * shared `{"error"}` body, its general meaning or the operation's own wording, and Retry-After on
 * 429 (RateLimited always sets it).
 */
export function errorResponses<S extends ErrorStatus>(
  statuses: readonly S[],
  descriptions: Partial<Record<S, string>> = {},
): Record<S, ErrorResponse> {
  const entries = statuses.map((status): [S, ErrorResponse] => [
    status,
    {
      description: descriptions[status] ?? GENERAL_MEANING[status],
      content: { "application/json": { schema: errorSchema } },
      ...(status === 429
        ? {
            headers: {
              "Retry-After": {
                description: "seconds until a retry can succeed",
                schema: { type: "integer", minimum: 1 },
              },
            },
          }
        : {}),
    },
  ]);
  return Object.fromEntries(entries) as Record<S, ErrorResponse>;
}
