import { Hono } from "hono";
import type { Redis } from "ioredis";
import type { DbHandle } from "@studyflow/db";

const CHECK_TIMEOUT_MS = 2_000;

function within<T>(work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), CHECK_TIMEOUT_MS).unref()),
  ]);
}

/** Liveness and readiness of a worker process, for compose healthchecks and orchestrators. */
export function createHealthApp(deps: { database: DbHandle; redis: Redis; isRunning: () => boolean }) {
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
  app.notFound((c) => c.json({ error: "not found" }, 404));
  return app;
}
