/**
 * Matching a request among the API's routes: hono's SmartRouter (which serves the API's routes
 * with its TrieRouter, RegExpRouter refusing them) against PartitionedRouter, the app's router
 * (src/routes/partitioned-router.ts), µs of CPU per match, medians of 7 rounds.
 *
 *   npx tsx apps/api/bench/router-bench.ts
 */
import { loadavg } from "node:os";
import { Queue } from "bullmq";
import { pino } from "pino";
import type { Router } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";
import { createDb } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { PartitionedRouter } from "../src/routes/partitioned-router";

const ROUNDS = 7;
const MATCHES = 20_000;
const REQUESTS: [string, string][] = [
  ["POST", "/v1/studies/bench-study/participants/p-0001/responses"],
  ["POST", "/v1/auth/login"],
  ["POST", "/v1/study-service/events/bench-study/submit"],
  ["GET", "/healthz"],
  ["GET", "/v1/no/such/route"],
];

// the app as the server builds it; nothing connects until a request needs it
const config = loadConfig({
  ...process.env,
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres",
  NODE_ENV: "production",
  LOG_LEVEL: "silent",
  MANAGEMENT_JWT_SECRET: "bench-management-secret-0123456789abcdef",
  PARTICIPANT_JWT_SECRET: "bench-participant-secret-0123456789abcdef",
});
const database = createDb(config.DATABASE_URL, { max: 1 });
const redis = createRedisConnection(config.REDIS_URL, "producer");
const queue = new Queue(TASKS_QUEUE, { connection: redis, prefix: `sf-bench-router-${process.pid}` });
const app = createApp({
  clock: systemClock,
  config,
  database,
  redis,
  taskQueue: queue,
  logger: pino({ level: "silent" }),
});

function filled<R extends Router<number>>(router: R): R {
  app.routes.forEach((route, index) => router.add(route.method, route.path, index));
  return router;
}
const routers: [string, Router<number>][] = [
  ["SmartRouter", filled(new SmartRouter<number>({ routers: [new RegExpRouter(), new TrieRouter()] }))],
  ["PartitionedRouter", filled(new PartitionedRouter<number>())],
];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`${app.routes.length} routes; load average ${loadavg()[0]!.toFixed(2)}`);
for (const [, router] of routers) router.match("GET", "/");
const partitioned = routers[1]![1] as PartitionedRouter<number>;
console.log(`PartitionedRouter: ${partitioned.routers.map((router) => router.name).join(", ")}`);
console.log("| request | " + routers.map(([name]) => `${name} µs`).join(" | ") + " |");
console.log("|---|" + routers.map(() => "---:").join("|") + "|");
for (const [method, path] of REQUESTS) {
  const rounds = routers.map((): number[] => []);
  for (let round = 0; round < ROUNDS; round++) {
    routers.forEach(([, router], index) => {
      // CPU time of this thread: on shared cores, time off the CPU would count against whichever ran
      const started = process.threadCpuUsage();
      for (let i = 0; i < MATCHES; i++) router.match(method, path);
      const used = process.threadCpuUsage(started);
      rounds[index]!.push((used.user + used.system) / MATCHES);
    });
  }
  console.log(`| ${method} ${path} | ${rounds.map((values) => median(values).toFixed(2)).join(" | ")} |`);
}
console.log(`load average ${loadavg()[0]!.toFixed(2)}`);
await queue.close();
redis.disconnect();
await database.close(1);
