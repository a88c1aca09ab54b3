import { randomUUID } from "node:crypto";
import { createMiddleware } from "hono/factory";
import type { Logger } from "pino";
import type { AppEnv } from "../app-env";

const acceptable = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Probes an orchestrator or a scraper calls every few seconds: their request lines go to debug,
 * so they neither flood the log nor cost a log write per probe.
 */
const PROBE_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/** Gives every request an id (the caller's X-Request-Id when sane), and logs its request line with it. */
export function requestId(logger: Logger) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const id = incoming && acceptable.test(incoming) ? incoming : randomUUID();
    c.set("requestId", id);
    c.set("baseLogger", logger);
    c.header("X-Request-Id", id);
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
    if (PROBE_PATHS.has(line.path) && line.status < 400) logger.debug(line, "request");
    else logger.info(line, "request");
  });
}
