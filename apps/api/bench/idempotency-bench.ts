/**
 * What an Idempotency-Key costs a participant's submit, in process (no sockets), against a database
 * of the bench's own: POST /v1/study-service/events/{k}/submit with a new key on every request
 * (the key's record claimed and completed in the event's transaction) against the same submit
 * without the header (the baseline), measured in one run, interleaved request by request, the
 * median of several rounds. Each round runs CONCURRENCY clients, each submitting for its own
 * participant. Retries (a replay) are measured too, for what a client's retry costs.
 *
 *   npm run bench -w @studyflow/api            (part of `npm run bench`)
 *   DATABASE_URL=postgres://… REDIS_URL=redis://… tsx bench/idempotency-bench.ts
 */
import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import { pino } from "pino";
import { createDb, runMigrations } from "@studyflow/db";
import { mintParticipantToken } from "@studyflow/domain/access";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy, createUserWithProfiles, setStudyRules } from "@studyflow/domain/study-setup";
import { TASKS_QUEUE, createRedisConnection } from "@studyflow/queue";
import { call, onEvent, str } from "@studyflow/testkit";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createBenchDatabase } from "./bench-database";

/** Submits per variant and round: enough for a steady rate, short enough for interleaving. */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1_200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
/** Clients at once; below the pool size (10), as a busy API's event routes run. */
const CONCURRENCY = 8;
const STUDY = "bench-idem";

const benchDatabase = await createBenchDatabase("idem");
const databaseUrl = benchDatabase.url;
const config = loadConfig({
  ...process.env,
  DATABASE_URL: databaseUrl,
  NODE_ENV: "production",
  LOG_LEVEL: "silent",
  MANAGEMENT_JWT_SECRET: "bench-management-secret-0123456789abcdef",
  PARTICIPANT_JWT_SECRET: "bench-participant-secret-0123456789abcdef",
});
const database = createDb(databaseUrl, { max: config.DATABASE_POOL_SIZE });
const redis = createRedisConnection(config.REDIS_URL, "producer");
const queue = new Queue(TASKS_QUEUE, { connection: redis, prefix: `sf-bench-idem-${process.pid}` });

try {
  await runMigrations(databaseUrl);
  const db = database.db;
  await createStudy(db, { key: STUDY });
  // a typical SUBMIT: a flag and a report, so the event writes what real studies' events write
  await setStudyRules(
    db,
    STUDY,
    [onEvent("SUBMIT", call("UPDATE_FLAG", str("submitted"), str("yes")), call("INIT_REPORT", str("weekly")))],
    "bench",
  );
  const app = createApp({
    clock: systemClock,
    config,
    database,
    redis,
    taskQueue: queue,
    logger: pino({ level: "silent" }),
  });

  const clients: { token: string; profileID: string }[] = [];
  for (let index = 0; index < CONCURRENCY; index++) {
    const { user, profiles } = await createUserWithProfiles(db, {
      now: new Date(systemClock()),
      email: `bench-${index}@example.org`,
      password: "Correct-Horse-Battery-9",
      profiles: ["main"],
    });
    const token = await mintParticipantToken({
      now: systemClock(),
      userId: user.id,
      tokenVersion: user.tokenVersion,
      secret: config.PARTICIPANT_JWT_SECRET,
    });
    const profileID = profiles[0]!.id;
    const enter = await app.request(`/v1/study-service/events/${STUDY}/enter`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ profileID }),
    });
    if (enter.status !== 200) throw new Error(`enter answered ${enter.status}`);
    clients.push({ token, profileID });
  }

  const body = (profileID: string) =>
    JSON.stringify({
      profileID,
      response: {
        key: "weekly",
        submittedAt: 1_780_000_000,
        responses: [{ key: "weekly.q1", response: { key: "rg", items: [{ key: "yes" }] } }],
      },
    });
  const submit = async (client: (typeof clients)[number], key: string | undefined) => {
    const res = await app.request(`/v1/study-service/events/${STUDY}/submit`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Authorization: `Bearer ${client.token}`,
        ...(key === undefined ? {} : { "Idempotency-Key": key }),
      },
      body: body(client.profileID),
    });
    if (res.status !== 200) throw new Error(`submit answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };

  // a retry of one stored answer per client: the key's first answer, read back
  const replayKeys = clients.map(() => randomUUID());
  await Promise.all(clients.map((client, index) => submit(client, replayKeys[index])));

  const variants: [string, (client: number) => string | undefined][] = [
    ["submit without a key (baseline)", () => undefined],
    ["submit with a new Idempotency-Key", () => randomUUID()],
    ["retry with a used key (replay)", (client) => replayKeys[client]],
  ];

  /**
   * One round: every client sends REQUESTS / CONCURRENCY submits, taking the variants in turn
   * (each client starting at another one), and each submit's time goes to its variant. Interleaved
   * request by request, the variants share the machine's load alike, which rounds of one variant
   * at a time do not on a shared machine.
   */
  async function round(): Promise<number[][]> {
    const times = variants.map((): number[] => []);
    const perClient = Math.ceil(REQUESTS / CONCURRENCY);
    await Promise.all(
      clients.map(async (client, clientIndex) => {
        for (let index = 0; index < perClient; index++) {
          const variant = (index + clientIndex) % variants.length;
          const started = performance.now();
          await submit(client, variants[variant]![1](clientIndex));
          times[variant]!.push(performance.now() - started);
        }
      }),
    );
    return times;
  }

  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  await round(); // warm-up
  const perRound = variants.map((): number[] => []);
  for (let index = 0; index < ROUNDS; index++) {
    const times = await round();
    times.forEach((values, variant) => perRound[variant]!.push(mean(values)));
  }
  // submits/s with CONCURRENCY clients each waiting for its answer: CONCURRENCY / mean time
  const rateOf = (variant: number) => (CONCURRENCY * 1000) / median(perRound[variant]!);
  const baseline = rateOf(0);
  console.log(
    `Participant submit in process, ${CONCURRENCY} concurrent clients, variants interleaved request by request, ` +
      `${REQUESTS} submits per round × ${ROUNDS} rounds, median of the rounds' mean times`,
  );
  console.log("| variant | ms/submit | submits/s | ratio to baseline |");
  console.log("|---|---|---|---|");
  variants.forEach(([label], variant) => {
    const rate = rateOf(variant);
    console.log(
      `| ${label} | ${median(perRound[variant]!).toFixed(2)} | ${rate.toFixed(0)} | ${(rate / baseline).toFixed(2)} |`,
    );
  });
} finally {
  await queue.close();
  redis.disconnect();
  await database.close();
  await benchDatabase.drop();
}
