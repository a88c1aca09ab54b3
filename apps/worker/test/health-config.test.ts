import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "@studyflow/config";
import { createDb } from "@studyflow/db";
import { createRedisConnection } from "@studyflow/queue";
import { createTestDatabase, testRedisUrl, type TestDatabase } from "@studyflow/testkit";
import { loadConfig } from "../src/config";
import { createHealthApp } from "../src/health";

describe("worker config", () => {
  it("has local defaults and names a bad variable", () => {
    expect(loadConfig({}).WORKER_CONCURRENCY).toBe(2);
    expect(() => loadConfig({ WORKER_CONCURRENCY: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ SMTP_URL: "http://mail" })).toThrow(/SMTP_URL: must be an smtp/);
    expect(() => loadConfig({ DASHBOARD_PASSWORD: "short" })).toThrow(/DASHBOARD_PASSWORD/);
    expect(loadConfig({}).BULK_WRITES_IN_DATABASE).toBe("on");
    expect(loadConfig({ BULK_WRITES_IN_DATABASE: "off" }).BULK_WRITES_IN_DATABASE).toBe("off");
    expect(() => loadConfig({ BULK_WRITES_IN_DATABASE: "no" })).toThrow(/BULK_WRITES_IN_DATABASE/);
  });
});

describe("worker health endpoints", () => {
  let database: TestDatabase;
  const redis = createRedisConnection(testRedisUrl, "producer");
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    redis.disconnect();
    await database.drop();
  });

  it("healthz follows the worker, readyz follows Postgres and Redis", async () => {
    let running = true;
    const app = createHealthApp({
      database,
      redis,
      isRunning: () => running,
      logger: pino({ level: "silent" }),
    } as never);
    expect((await app.request("/healthz")).status).toBe(200);
    expect((await app.request("/readyz")).status).toBe(200);
    running = false;
    expect((await app.request("/healthz")).status).toBe(503);

    const down = createDb("postgres://postgres@127.0.0.1:1/none", { max: 1 });
    const broken = createHealthApp({
      database: down,
      redis,
      isRunning: () => true,
      logger: pino({ level: "silent" }),
    } as never);
    const res = await broken.request("/readyz");
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "not ready: postgres unavailable" });
    await down.close(1);
  });
});
