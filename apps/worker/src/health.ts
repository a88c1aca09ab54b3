import type { Queue } from "bullmq";
import { Hono } from "hono";
import type { Redis } from "ioredis";
import type { Registry } from "prom-client";
import type { DbHandle } from "@studyflow/db";
import { mountDashboard, type DashboardCredentials } from "./dashboard";

const CHECK_TIMEOUT_MS = 2_000;

function within<T>(work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), CHECK_TIMEOUT_MS).unref()),
  ]);
}

export interface HealthAppDeps {
  database: DbHandle;
  redis: Redis;
  isRunning: () => boolean;
  /** Served at GET /metrics when given. */
  metrics?: { registry: Registry };
  /** Mounted at /admin/queues when given; absent = the dashboard answers 404. */
  dashboard?: { queues: Queue[]; credentials: DashboardCredentials };
}

/**
 * The worker's health/admin app: liveness and readiness for compose healthchecks and
 * orchestrators, Prometheus metrics, and the queue dashboard.
 */
export function createHealthApp(deps: HealthAppDeps) {
  const app = new Hono();
  app.get("/healthz", (c) =>
    deps.isRunning() ? c.json({ status: "ok" }) : c.json({ error: "worker is not running" }, 503),
  );
  app.get("/readyz", async (c) => {
    const failures: string[] = [];
    await Promise.all([
      within(deps.database.sql`select 1`).catch(() => failures.push("postgres")),
      within(deps.redis.ping()).catch(() => failures.push("redis")),
    ]);
    if (failures.length > 0) return c.json({ error: `not ready: ${failures.sort().join(", ")} unavailable` }, 503);
    return c.json({ status: "ready" });
  });
  const metrics = deps.metrics;
  if (metrics) {
    app.get("/metrics", async (c) =>
      c.body(await metrics.registry.metrics(), 200, { "Content-Type": metrics.registry.contentType }),
    );
  }
  if (deps.dashboard) mountDashboard(app, deps.dashboard.queues, deps.dashboard.credentials);
  app.notFound((c) => c.json({ error: "not found" }, 404));
  return app;
}
