/**
 * What each of the API's global middleware costs per request, in process (no sockets): a plain
 * Hono app answering GET /healthz, the same app with one middleware in front, and the whole
 * studyflow app, measured in one run, interleaved, the median of several rounds. The load
 * benchmark (`npm run bench:api`) measures the same over HTTP; this one says where the difference
 * goes.
 *
 *   npm run bench -w @studyflow/api            (part of `npm run bench`)
 */
import { Queue } from "bullmq";
import { Hono, type MiddlewareHandler } from "hono";
import { pino } from "pino";
import { createDb } from "@studyflow/db";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { createApp } from "../src/app";
import type { AppEnv } from "../src/app-env";
import { resolveClientAddress } from "../src/client-address";
import { loadConfig } from "../src/config";
import { createApiMetrics } from "../src/metrics";
import { limitBodySize } from "../src/middleware/body-size";
import { inputBoundary } from "../src/middleware/input-boundary";
import { httpMetrics } from "../src/middleware/metrics";
import { requestId } from "../src/middleware/request-id";
import { systemClock } from "@studyflow/domain/foundation";

const REQUESTS = 4_000;
const ROUNDS = 25;

type Fetch = (request: Request) => Response | Promise<Response>;

function plainWith(...middleware: MiddlewareHandler<AppEnv>[]): Fetch {
  const app = new Hono<AppEnv>();
  for (const handler of middleware) app.use(handler);
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  return app.fetch;
}

/** Microseconds per request, one after the other. */
async function measure(fetch: Fetch): Promise<number> {
  const started = performance.now();
  for (let index = 0; index < REQUESTS; index++) {
    const res = await fetch(new Request("http://localhost/healthz"));
    if (res.status !== 200) throw new Error(`GET /healthz answered ${res.status}`);
    await res.arrayBuffer();
  }
  return ((performance.now() - started) * 1000) / REQUESTS;
}

const config = loadConfig({
  ...process.env,
  NODE_ENV: "production",
  LOG_LEVEL: "info",
  MANAGEMENT_JWT_SECRET: "bench-management-secret-0123456789abcdef",
  PARTICIPANT_JWT_SECRET: "bench-participant-secret-0123456789abcdef",
});
const database = createDb(config.DATABASE_URL, { max: 1 });
const redis = createRedisConnection(config.REDIS_URL, "producer");
const queue = new Queue(TASKS_QUEUE, { connection: redis, prefix: `sf-bench-mw-${process.pid}` });
// production logging, into the void: the cost of formatting a line is what counts here
const logger = pino({ level: "info" }, pino.destination("/dev/null"));

const variants: [string, Fetch][] = [
  ["plain Hono", plainWith()],
  ["+ request id and request log", plainWith(requestId(logger))],
  ["+ metrics", plainWith(httpMetrics(createApiMetrics()))],
  ["+ body size limit", plainWith(limitBodySize(2 * 1024 * 1024))],
  ["+ input boundary", plainWith(inputBoundary())],
  ["+ client address", plainWith(resolveClientAddress(1))],
  ["studyflow (createApp)", createApp({ clock: systemClock, config, database, redis, taskQueue: queue, logger }).fetch],
];

try {
  const figures = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (const [, fetch] of variants) await measure(fetch); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, fetch] of variants) figures.get(name)!.push(await measure(fetch));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const plain = median(figures.get("plain Hono")!);
  console.log(`GET /healthz in process, ${REQUESTS} requests × ${ROUNDS} rounds, median µs per request`);
  console.log("| variant | µs/request | over plain Hono | ratio to plain |");
  console.log("|---|---|---|---|");
  for (const [name, values] of figures) {
    const us = median(values);
    console.log(`| ${name} | ${us.toFixed(2)} | ${(us - plain).toFixed(2)} | ${(plain / us).toFixed(2)} |`);
  }
} finally {
  await queue.close();
  redis.disconnect();
  await database.close();
}
