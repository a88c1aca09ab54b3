// The due-message query at a realistic size: participants with scheduled messages spread over a
// year, indexed by the migration's own backfill statement, and the query the sender runs each
// round checked to be a range scan on participant_message_schedule_due_idx that stops after its
// limit. Prints the timings next to the scan of every participant's JSON it replaces.
// MESSAGE_SCHEDULE_BENCH_PARTICIPANTS=1000000 runs it at a million (about a minute of seeding).
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantMessageSchedule, participants } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import { dueScheduleRows, queueDueParticipantMessages, setMessageTemplate } from "@studyflow/domain/messages";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const PARTICIPANTS = Number(process.env.MESSAGE_SCHEDULE_BENCH_PARTICIPANTS ?? 200_000);
const START = Date.UTC(2031, 0, 1) / 1000;
const YEAR = 365 * 86_400;
/** Nine hours into the year: about 0.1 % of the messages are due, as on an ordinary morning. */
const NOW = START + 9 * 3_600;
const LIMIT = 20;

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  "Actual Rows"?: number;
  Plans?: PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

describe(`the due-message query at ${PARTICIPANTS.toLocaleString("en")} participants`, () => {
  let database: TestDatabase;
  let dueCount = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: "bench" });
    const sql = database.sql;
    // One message each, due at a pseudo-random second of the year (7919 is prime: a permutation).
    const [, seedMs] = await timed(
      () => sql`
        insert into participants (study_key, participant_id, study_status, entered_at, modified_at, messages)
        select 'bench', 'p' || lpad(i::text, 9, '0'), 'active', ${START}, ${START},
               jsonb_build_array(jsonb_build_object(
                 'id', 'm' || i, 'type', 'weekly',
                 'scheduledFor', ${START}::bigint + (i::bigint * 7919 % ${PARTICIPANTS}) * ${Math.floor(YEAR / PARTICIPANTS)}))
        from generate_series(1, ${PARTICIPANTS}) as i`,
    );
    // The migration's backfill statement, as it runs on an existing database.
    const migration = await readFile(
      fileURLToPath(new URL("../../db/migrations/0008_timer_messages_notifications.sql", import.meta.url)),
      "utf8",
    );
    const backfill = migration
      .split("--> statement-breakpoint")
      .map((statement) => statement.trim())
      .find((statement) => statement.includes('INSERT INTO "participant_message_schedule"'));
    if (!backfill) throw new Error("the migration has no backfill of participant_message_schedule");
    const [, backfillMs] = await timed(() => sql.unsafe(backfill));
    await sql`analyze participants`;
    await sql`analyze participant_message_schedule`;
    const [row] = await sql<{ due: string }[]>`
      select count(*) as due from participant_message_schedule where due_at <= ${NOW}`;
    dueCount = Number(row?.due);
    console.log(
      `seeded ${PARTICIPANTS} participants in ${seedMs.toFixed(0)} ms, backfilled their index in ` +
        `${backfillMs.toFixed(0)} ms; ${dueCount} messages due`,
    );
  }, 300_000);
  afterAll(async () => {
    await database.drop();
  });

  it("the migration's backfill indexed every participant's message", async () => {
    const [indexed] = await database.db.select({ n: count() }).from(participantMessageSchedule);
    expect(indexed?.n).toBe(PARTICIPANTS);
    expect(dueCount).toBeGreaterThan(LIMIT);
  });

  it("finds due messages by a range scan of the due-time index that stops after its limit", async () => {
    const query = dueScheduleRows(database.db, NOW, LIMIT).toSQL();
    const [explained] = await database.sql.unsafe<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>(
      `explain (analyze, buffers, format json) ${query.sql}`,
      query.params as never[],
    );
    const nodes = nodesOf(explained!["QUERY PLAN"][0]!.Plan);
    console.log(
      `due query plan: ${nodes.map((node) => node["Node Type"] + (node["Index Name"] ? ` using ${node["Index Name"]}` : "")).join(" → ")}`,
    );
    const scan = nodes.find((node) => node["Relation Name"] === "participant_message_schedule");
    expect(scan).toMatchObject({ "Node Type": "Index Scan", "Index Name": "participant_message_schedule_due_idx" });
    // the scan stopped at the limit instead of reading every due row, let alone every row
    expect(scan?.["Actual Rows"]).toBe(LIMIT);
    expect(nodes.some((node) => node["Node Type"] === "Seq Scan")).toBe(false);

    const indexed: number[] = [];
    for (let i = 0; i < 30; i++) indexed.push((await timed(() => dueScheduleRows(database.db, NOW, LIMIT)))[1]);
    const scanned: number[] = [];
    for (let i = 0; i < 3; i++) {
      scanned.push(
        (
          await timed(
            () => database.sql`
              select p.participant_id, m ->> 'id' as message_id
              from participants p, jsonb_array_elements(p.messages) m
              where (m ->> 'scheduledFor')::bigint <= ${NOW}
              order by (m ->> 'scheduledFor')::bigint
              limit ${LIMIT}`,
          )
        )[1],
      );
    }
    console.log(
      `due query, ${LIMIT} of ${dueCount} due rows among ${PARTICIPANTS}: index ${median(indexed).toFixed(2)} ms ` +
        `(median of 30); scanning every participant's messages instead: ${median(scanned).toFixed(0)} ms (median of 3)`,
    );
    expect(median(indexed)).toBeLessThan(median(scanned));
  });

  it("a sender round at this size takes milliseconds, and takes the oldest due messages", async () => {
    await setMessageTemplate(
      database.db,
      { studyKey: "bench", messageType: "weekly", language: "en", subject: "Weekly", body: "Hello" },
      "test",
      { clock: systemClock },
    );
    const [round, ms] = await timed(() => queueDueParticipantMessages(database.db, NOW * 1000, LIMIT));
    expect(round).toMatchObject({ claimed: LIMIT, queued: LIMIT, busy: 0, stale: 0 });
    console.log(`a sender round of ${LIMIT} due messages (outbox rows, state writes, index rows): ${ms.toFixed(0)} ms`);
    const [first] = await database.db
      .select({ messages: participants.messages })
      .from(participants)
      .where(eq(participants.participantId, `p${String(PARTICIPANTS).padStart(9, "0")}`));
    // i = PARTICIPANTS is due at the very start of the year: among the first sent
    expect(first?.messages).toEqual([]);
  });
});
