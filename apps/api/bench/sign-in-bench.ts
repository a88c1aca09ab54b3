/**
 * Participant sign-in against its floor, in one run: raw argon2id verifications per second with the
 * stored hash's parameters (the floor: a sign-in must verify one), then POST /v1/auth/login per
 * second at the same concurrency through the whole app (body reading, rate-limit checks in Redis,
 * the user lookup, the session and refresh-token insert, the access token, the CASE user), and
 * GET /healthz latency measured one request after another while those sign-ins run. Rounds are
 * interleaved and the median reported. In process (no sockets): the event loop the health check
 * waits on is the one the sign-ins use, which is what the p99 is about.
 *
 * Targets (issue 25): sign-ins ≥ 0.85 × raw verifications/s; /healthz p99 < 20 ms under sign-ins.
 *
 *   npm run bench -w @studyflow/api            (part of `npm run bench`)
 */
import { Queue } from "bullmq";
import { pino } from "pino";
import { createDb, profiles, runMigrations, users } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { PASSWORD_HASH_PARAMETERS, hashPassword, verifyPassword } from "@studyflow/domain/participant-accounts";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createBenchDatabase } from "./bench-database";

/** argon2 runs on libuv's thread pool (4 threads by default): 4 at a time keeps it busy. */
const CONCURRENCY = 4;
const OPERATIONS_PER_ROUND = 80;
const ROUNDS = 5;
const PASSWORD = "harbour lights at dusk";

// a database of its own, migrated, dropped at the end
const benchDatabase = await createBenchDatabase("signin");
const databaseUrl = benchDatabase.url;
await runMigrations(databaseUrl);
const config = loadConfig({
  ...process.env,
  DATABASE_URL: databaseUrl,
  NODE_ENV: "production",
  LOG_LEVEL: "silent",
  TRUST_PROXY: "1",
  MANAGEMENT_JWT_SECRET: "bench-management-secret-0123456789abcdef",
  PARTICIPANT_JWT_SECRET: "bench-participant-secret-0123456789abcdef",
});
const database = createDb(databaseUrl, { max: config.DATABASE_POOL_SIZE });
const redis = createRedisConnection(config.REDIS_URL, "producer");
const queue = new Queue(TASKS_QUEUE, { connection: redis, prefix: `sf-bench-signin-${process.pid}` });
const app = createApp({
  clock: systemClock,
  config,
  database,
  redis,
  taskQueue: queue,
  logger: pino({ level: "silent" }),
});

/** Runs `operation` `count` times, `CONCURRENCY` at a time; returns operations per second. */
async function throughput(count: number, operation: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await operation(next++);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

try {
  const email = "bench@example.org";
  const storedHash = await hashPassword(PASSWORD);
  const [user] = await database.db.insert(users).values({ email, passwordHash: storedHash }).returning();
  await database.db.insert(profiles).values({ userId: user!.id, mainProfile: true });

  const verifyOnce = async () => {
    if (!(await verifyPassword(storedHash, PASSWORD))) throw new Error("verification failed");
  };
  const body = JSON.stringify({ email, password: PASSWORD, instanceID: config.INSTANCE_ID });
  const signInOnce = async (index: number) => {
    const res = await app.fetch(
      new Request("http://localhost/v1/auth/login", {
        method: "POST",
        // as the participant app sends it; a new client address for each, as many people signing in
        headers: {
          "content-type": "text/plain;charset=UTF-8",
          "x-forwarded-for": `10.1.${index % 250}.${index % 199}`,
        },
        body,
      }),
    );
    if (res.status !== 200) throw new Error(`login answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };

  // warm-up: the JIT, the pool's connections, the dummy hash
  await throughput(CONCURRENCY * 2, verifyOnce);
  await throughput(CONCURRENCY * 2, signInOnce);

  const raw: number[] = [];
  const signIns: number[] = [];
  const health: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    raw.push(await throughput(OPERATIONS_PER_ROUND, verifyOnce));
    let running = true;
    const probe = (async () => {
      while (running) {
        const started = performance.now();
        const res = await app.fetch(new Request("http://localhost/healthz"));
        await res.arrayBuffer();
        health.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    signIns.push(await throughput(OPERATIONS_PER_ROUND, signInOnce));
    running = false;
    await probe;
  }

  const rawMedian = median(raw);
  const signInMedian = median(signIns);
  const { memoryCost, timeCost, parallelism } = PASSWORD_HASH_PARAMETERS;
  console.log(
    `participant sign-in, argon2id m=${memoryCost} KiB t=${timeCost} p=${parallelism}, concurrency ${CONCURRENCY}, ` +
      `${OPERATIONS_PER_ROUND} operations × ${ROUNDS} rounds, medians`,
  );
  console.log("| measure | figure | target |");
  console.log("|---|---|---|");
  console.log(`| raw argon2id verifications/s | ${rawMedian.toFixed(1)} | (baseline) |`);
  console.log(`| POST /v1/auth/login sign-ins/s | ${signInMedian.toFixed(1)} | |`);
  console.log(`| ratio sign-ins / raw verifications | ${(signInMedian / rawMedian).toFixed(2)} | ≥ 0.85 |`);
  console.log(
    `| GET /healthz during sign-ins: p50 / p99 / max ms (${health.length} probes) | ` +
      `${percentile(health, 50).toFixed(2)} / ${percentile(health, 99).toFixed(2)} / ${Math.max(...health).toFixed(2)} | p99 < 20 |`,
  );
} finally {
  await queue.close();
  redis.disconnect();
  await database.close();
  await benchDatabase.drop();
}
