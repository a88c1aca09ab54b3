import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import type { ApiMetrics } from "../metrics";

/** Label of requests no handler matched (404s, wrong methods), so junk paths add no series. */
export const UNMATCHED_ROUTE = "unmatched";

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * The template of the handler the request was routed to, e.g. `/v1/studies/:studyKey/track-account`.
 * Middleware is registered with `use` (method ALL) and matches wildcards, so the last route with a
 * concrete method is the handler; a request stopped by middleware (401) still counts under it.
 */
function routeTemplateOf(c: Context<AppEnv>): string {
  const handler = matchedRoutes(c).findLast((route) => route.method !== "ALL");
  return handler?.path ?? UNMATCHED_ROUTE;
}

/** Counts every request and observes its duration, labelled by method, route template and status. */
export function httpMetrics(metrics: ApiMetrics) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const stopTimer = metrics.httpRequestDuration.startTimer();
    let status: number | undefined;
    try {
      await next();
      status = c.res.status;
    } finally {
      const labels = {
        method: KNOWN_METHODS.has(c.req.method) ? c.req.method : "OTHER",
        route: routeTemplateOf(c),
        // Hono turns handler errors into responses before this point; a throw here is a 500.
        status: String(status ?? 500),
      };
      metrics.httpRequests.inc(labels);
      stopTimer(labels);
    }
  });
}
