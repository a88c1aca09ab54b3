import { createHash, timingSafeEqual } from "node:crypto";
import { serve } from "@hono/node-server";
import { Hono, type Context } from "hono";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ApiConfig } from "./config";
import { whenListening, type ListeningServer } from "./listening-server";
import type { ApiRouter } from "./routes/create-router";
import { defineRoute } from "./routes/define-route";

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
 * Where /metrics is served, from the configuration:
 * - METRICS_PORT set: on that admin port only (the API's port answers 404);
 * - else METRICS_TOKEN set: on the API's port;
 * - else outside production: on the API's port, to anyone (development, tests);
 * - else (production, neither set): nowhere, rather than to anyone who reaches the API.
 * METRICS_TOKEN, when set, is required wherever /metrics is served, the admin port included.
 */
export type MetricsExposure =
  | { on: "api-port"; token: string | undefined }
  | { on: "admin-port"; port: number; host: string; token: string | undefined }
  | { on: "nowhere" };

export function metricsExposure(
  config: Pick<ApiConfig, "NODE_ENV" | "HOST" | "METRICS_PORT" | "METRICS_HOST" | "METRICS_TOKEN">,
): MetricsExposure {
  const token = config.METRICS_TOKEN;
  if (config.METRICS_PORT !== undefined) {
    return { on: "admin-port", port: config.METRICS_PORT, host: config.METRICS_HOST ?? config.HOST, token };
  }
  if (token !== undefined || config.NODE_ENV !== "production") return { on: "api-port", token };
  return { on: "nowhere" };
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * Checks `Authorization: Bearer <METRICS_TOKEN>`: the reason to refuse, or undefined when the
 * token matches. Both sides are hashed first, so the comparison takes the same time whatever
 * the length or the first differing character of a guess.
 */
export function metricsTokenCheck(token: string): (authorization: string | undefined) => string | undefined {
  const expected = sha256(token);
  return (authorization) => {
    if (authorization === undefined) return "metrics need an Authorization: Bearer <METRICS_TOKEN> header";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) return "Authorization header must be 'Bearer <token>'";
    return timingSafeEqual(sha256(match[1]), expected) ? undefined : "invalid metrics token";
  };
}

/** The registry's Prometheus text, or a 401 when a token is required and not given. */
function metricsHandler(metrics: ApiMetrics, token: string | undefined) {
  const refusal = token === undefined ? () => undefined : metricsTokenCheck(token);
  return async (c: Context) => {
    const reason = refusal(c.req.header("authorization"));
    if (reason !== undefined) {
      c.header("WWW-Authenticate", 'Bearer realm="metrics"');
      return c.json({ error: reason }, 401);
    }
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { "Content-Type": metrics.registry.contentType });
  };
}

/**
 * Prometheus text exposition of the app's registry on the API's own port, when the exposure says
 * so (otherwise the path is unknown there: 404). Left out of the OpenAPI document: it is an
 * operations endpoint for the scraper, not part of the API's contract.
 */
export function registerMetrics(router: ApiRouter, metrics: ApiMetrics, exposure: MetricsExposure) {
  if (exposure.on !== "api-port") return;
  defineRoute(
    router,
    { method: "get", path: METRICS_PATH, hide: true, responses: { 200: { description: "Prometheus text" } } },
    metricsHandler(metrics, exposure.token),
  );
}

/** The admin port's app: GET /metrics and nothing else. */
export function createMetricsApp(metrics: ApiMetrics, token: string | undefined) {
  const app = new Hono();
  app.get(METRICS_PATH, metricsHandler(metrics, token));
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((_error, c) => c.json({ error: "cannot read the metrics" }, 500));
  return app;
}

/** The metrics port's server (a scraper keeps a keep-alive connection open: close drops it). */
export type MetricsServer = ListeningServer;

/** Serves the registry on the admin port; resolves once it listens, rejects if it cannot. */
export async function startMetricsServer(
  metrics: ApiMetrics,
  exposure: Extract<MetricsExposure, { on: "admin-port" }>,
): Promise<MetricsServer> {
  const server = serve({
    fetch: createMetricsApp(metrics, exposure.token).fetch,
    port: exposure.port,
    hostname: exposure.host,
  });
  return whenListening(server);
}
