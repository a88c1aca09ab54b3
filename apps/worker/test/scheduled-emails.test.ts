import { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingMessages, scheduledEmails, users } from "@studyflow/db";
import { createUserWithProfiles, saveScheduledEmail } from "@studyflow/domain";
import { MAINTENANCE_QUEUE, createRedisConnection } from "@studyflow/queue";
import { createTestDatabase, testRedisUrl, uniqueQueuePrefix, type TestDatabase } from "@studyflow/testkit";
import { upsertSchedules } from "../src/schedules/cluster-schedules";
import {
  FIRE_SCHEDULED_EMAILS_EVERY_MS,
  runScheduledEmailsRound,
  scheduledEmailsSchedule,
} from "../src/schedules/scheduled-emails";

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("scheduled e-mails: the cluster-wide round", () => {
  let database: TestDatabase;
  const producer = createRedisConnection(testRedisUrl, "producer");
  const prefix = uniqueQueuePrefix();
  let queue: Queue;

  beforeAll(async () => {
    database = await createTestDatabase();
    queue = new Queue(MAINTENANCE_QUEUE, { connection: producer, prefix });
  });
  afterAll(async () => {
    await queue.close();
    await producer.quit();
    await database.close();
  });

  it("is one job scheduler however many replicas upsert it", async () => {
    await upsertSchedules(queue, [scheduledEmailsSchedule()]);
    await upsertSchedules(queue, [scheduledEmailsSchedule()]);
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers.map((s) => [s.key, s.every])).toEqual([
      ["fire-scheduled-emails", FIRE_SCHEDULED_EMAILS_EVERY_MS],
    ]);
  });

  it("fires due schedules into the outbox and moves them on; a second round fires nothing", async () => {
    const db = database.db;
    const now = Date.now();
    const nowSeconds = Math.floor(now / 1000);
    const made = await createUserWithProfiles(db, {
      email: "reader@example.org",
      password: "Correct-Horse-Battery-9",
      profiles: ["main"],
    });
    await db
      .update(users)
      .set({ accountConfirmedAt: new Date(now - 1000), weeklyMessageDayOfWeek: new Date(now).getUTCDay() })
      .where(eq(users.id, made.user.id));
    const schedule = await saveScheduledEmail(
      db,
      {
        type: "all-users",
        template: {
          messageType: "reminder",
          defaultLanguage: "en",
          translations: [{ lang: "en", subject: "Hi", templateDef: b64("<p>{{.messageType}}</p>") }],
        },
        nextTime: nowSeconds - 5,
        period: 3600,
      },
      "tester",
      nowSeconds,
    );
    const logged: unknown[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const deps = { db, logger, clock: () => now };
    expect(await runScheduledEmailsRound(deps)).toEqual({ fired: 1, queued: 1, ended: 0 });
    expect(await runScheduledEmailsRound(deps)).toEqual({ fired: 0, queued: 0, ended: 0 });
    const mails = await db.select().from(outgoingMessages);
    expect(mails.map((mail) => [mail.userId, mail.payload])).toEqual([
      [made.user.id, { scheduleId: schedule.id, messageType: "reminder", subject: "Hi", html: "<p>reminder</p>" }],
    ]);
    const [row] = await db.select().from(scheduledEmails);
    expect(row?.nextTime).toBe(nowSeconds - 5 + 3600);
    expect(logged).toEqual([expect.objectContaining({ msg: "scheduled e-mails fired", fired: 1, queued: 1 })]);
  });
});
