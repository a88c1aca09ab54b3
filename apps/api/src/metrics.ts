import type { OpenAPIHono } from "@hono/zod-openapi";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { AppEnv } from "./app-env";

export const METRICS_PATH = "/metrics";

/**
 * Request durations from 1 ms (a health check) to 5 s (a large rule set upload or a slow query);
 * anything slower lands in +Inf, which is an alert on its own.
 */
const DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

type HttpLabel = "method" | "route" | "status";

export interface ApiMetrics {
  /** One registry per app, so several apps in one process (tests) never share a series. */
  registry: Registry;
  httpRequests: Counter<HttpLabel>;
  httpRequestDuration: Histogram<HttpLabel>;
  ruleFailures: Counter<"event_type" | "outcome">;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: "studyflow_http_requests_total",
      help: "HTTP requests answered, by method, matched route template and status.",
      labelNames: ["method", "route", "status"],
      registers: [registry],
    }),
    httpRequestDuration: new Histogram({
      name: "studyflow_http_request_duration_seconds",
      help: "Time from receiving a request to its response, by method, matched route template and status.",
      labelNames: ["method", "route", "status"],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: [registry],
    }),
    ruleFailures: new Counter({
      name: "studyflow_rule_failures_total",
      help: "Study rules that failed for a participant event, by event type and outcome (rule-skipped, action-skipped, event-rejected).",
      labelNames: ["event_type", "outcome"],
      registers: [registry],
    }),
  };
}

/**
 * Prometheus text exposition of the app's registry. Left out of the OpenAPI document: it is an
 * operations endpoint for the scraper, not part of the API's contract.
 */
export function registerMetrics(router: OpenAPIHono<AppEnv>, metrics: ApiMetrics) {
  router.get(METRICS_PATH, async (c) => {
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { "Content-Type": metrics.registry.contentType });
  });
}
