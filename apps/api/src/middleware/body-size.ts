import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { errorBody } from "../errors";

/** Largest accepted request body but a participant file upload's; a study's rule set is the biggest thing anyone sends. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * 413 for a request body larger than `maxBytes`, decided before anything reads the body: a
 * declared Content-Length over the limit is refused at once, without reading a byte; a body
 * without one (chunked) is counted as it arrives and refused as soon as the count passes the
 * limit, so at most `maxBytes` (and the chunk that crossed it) is ever held.
 *
 * hono's bodyLimit wraps the body in a counting stream, which makes @hono/node-server build a full
 * Fetch Request for every request, GET included; the common cases skip it: a GET or HEAD without
 * a body, and a body whose Content-Length fits (Node's HTTP parser holds a body to its
 * Content-Length).
 */
export function limitBodySize(maxBytes: number, message = `request body larger than ${maxBytes} bytes`) {
  const counted = bodyLimit({
    maxSize: maxBytes,
    onError: (c) => c.json(errorBody(message), 413),
  });
  return createMiddleware<AppEnv>(async (c, next) => {
    const length = c.req.header("content-length");
    if (c.req.header("transfer-encoding") === undefined) {
      if (length === undefined && (c.req.method === "GET" || c.req.method === "HEAD")) return next();
      if (length !== undefined && /^\d+$/.test(length) && Number(length) <= maxBytes) return next();
    }
    return counted(c, next);
  });
}
