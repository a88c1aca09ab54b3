import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Logger } from "pino";
import type { AppEnv } from "../app-env";
import { REQUEST_LINE } from "../logger";

const acceptable = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Probes an orchestrator or a scraper calls every few seconds: their request lines go to debug,
 * so they neither flood the log nor cost a log write per probe.
 */
const PROBE_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Sets the X-Request-Id answer header. Served by @hono/node-server, on the Node response itself,
 * which sends it with whatever answer the app gives: a header on the context makes hono build a
 * Fetch Headers object for every answer, which costs a cheap request (a health check) a third of
 * its time. In process (tests, app.request) there is no Node response: the context's header.
 */
function answerHeader(c: Context<AppEnv>, id: string) {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (outgoing && typeof outgoing.setHeader === "function" && !outgoing.headersSent) {
    outgoing.setHeader("X-Request-Id", id);
  } else {
    c.header("X-Request-Id", id);
  }
}

/** Gives every request an id (the caller's X-Request-Id when sane), and logs its request line with it. */
export function requestId(logger: Logger) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const id = incoming && acceptable.test(incoming) ? incoming : randomUUID();
    c.set("requestId", id);
    c.set("baseLogger", logger);
    answerHeader(c, id);
    // The log's duration is measured time, not the app's clock: a stopped test clock would log 0 ms.
    const started = performance.now();
    await next();
    const line = {
      requestId: id,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
    };
    // the id inline, as loggerOf(c) binds it: no child logger for a request that logs nothing else
    if (PROBE_PATHS.has(line.path) && line.status < 400) logger.debug(line, REQUEST_LINE);
    else logger.info(line, REQUEST_LINE);
  });
}
