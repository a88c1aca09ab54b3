import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { errorBody } from "../errors";

/**
 * 413 for a request body larger than `maxBytes`. hono's bodyLimit wraps the body in a counting
 * stream, which makes @hono/node-server build a full Fetch Request for every request, GET included;
 * the common cases skip it: a GET or HEAD without a body, and a body whose Content-Length fits
 * (Node's HTTP parser holds a body to its Content-Length). Other bodies (chunked, or without a
 * length) are counted by bodyLimit as they arrive.
 */
export function limitBodySize(maxBytes: number) {
  const counted = bodyLimit({
    maxSize: maxBytes,
    onError: (c) => c.json(errorBody(`request body larger than ${maxBytes} bytes`), 413),
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
