import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gunzipSync } from "node:zlib";
import { managementSessions, managementUsers, participants, surveyResponses } from "@studyflow/db";
import { listDailyExports, openDailyExport, setDailyExportConfig } from "@studyflow/domain/exports";
import { createFileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import {
  ACCOUNT_DELETION_QUEUE,
  MAINTENANCE_QUEUE,
  OUTBOX_QUEUE,
  TASKS_QUEUE,
  createRedisConnection,
} from "@studyflow/queue";
import { testRedisUrl } from "@studyflow/testkit";
import {
  DAILY_EXPORTS_EVERY_MS,
  EXPIRE_TEMPORARY_EVERY_MS,
  PRUNE_FINISHED_TASKS_EVERY_MS,
  REMOVE_EXPIRED_EXPORTS_EVERY_MS,
  SWEEP_EXPIRED_ACCOUNT_TOKENS_EVERY_MS,
  SWEEP_MANAGEMENT_SESSIONS_EVERY_MS,
  SWEEP_STALE_TASKS_EVERY_MS,
} from "../src/schedules/cluster-schedules";
import { FIRE_SCHEDULED_EMAILS_EVERY_MS } from "../src/schedules/scheduled-emails";
import { createWorkerHarness, type WorkerHarness } from "./worker-harness";

const DAY = 86_400;

describe("periodic work runs on cluster-wide BullMQ job schedulers", () => {
  let harness: WorkerHarness;
  const producer = createRedisConnection(testRedisUrl, "producer");
  let maintenance: Queue;
  let outbox: Queue;

  beforeAll(async () => {
    harness = await createWorkerHarness();
    maintenance = new Queue(MAINTENANCE_QUEUE, { connection: producer, prefix: harness.prefix });
    outbox = new Queue(OUTBOX_QUEUE, { connection: producer, prefix: harness.prefix });
  });
  afterAll(async () => {
    await harness.close();
    await maintenance.close();
    await outbox.close();
    producer.disconnect();
  });

  it("two replicas keep one scheduler per kind of work, and housekeeping runs once, not once per replica", async () => {
    await createStudy(harness.database.db, { key: "s" });
    const now = Date.UTC(2031, 0, 1);
    const nowSeconds = Math.floor(now / 1000);
    const rows = [
      { participantId: "old-temp", studyStatus: "temporary", enteredAt: nowSeconds - 30 * DAY },
      { participantId: "new-temp", studyStatus: "temporary", enteredAt: nowSeconds - DAY },
      { participantId: "old-active", studyStatus: "active", enteredAt: nowSeconds - 30 * DAY },
    ];
    await harness.database.db
      .insert(participants)
      .values(rows.map((row) => ({ ...row, studyKey: "s", modifiedAt: row.enteredAt })));
    // A study with a daily export of its "weekly" survey: two responses yesterday, one today, one the day before.
    const survey = { surveyDefinition: { key: "weekly", items: [] } };
    await publishSurveyVersion(
      harness.database.db,
      { studyKey: "s", actor: "t", survey },
      { clock: () => now - DAY * 5_000 },
    );
    await setDailyExportConfig(
      harness.database.db,
      "s",
      {
        surveyKeys: ["weekly"],
        enabled: true,
        options: {
          format: "json",
          questionOptionSep: "-",
          shortKeys: false,
          extraContextColumns: [],
          includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
          gzip: true,
        },
      },
      "researcher",
      { clock: systemClock },
    );
    await harness.database.db.insert(surveyResponses).values(
      [-DAY - 1, -DAY, -1, 0].map((offset, index) => ({
        studyKey: "s",
        participantId: `p${index}`,
        key: "weekly",
        arrivedAt: nowSeconds + offset,
      })),
    );

    // Two management sign-in sessions: one ended an hour ago (swept), one still open (kept).
    const [researcher] = await harness.database.db
      .insert(managementUsers)
      .values({ provider: "idp", sub: "researcher" })
      .returning();
    await harness.database.db.insert(managementSessions).values(
      [
        { id: "00000000-0000-4000-8000-000000000001", expiresAt: new Date(now - 3_600_000) },
        { id: "00000000-0000-4000-8000-000000000002", expiresAt: new Date(now + 3_600_000) },
      ].map((session) => ({ ...session, userId: researcher!.id, kind: "case-admin" as const })),
    );

    const mail = { smtpUrl: "smtp://127.0.0.1:1", from: "studyflow <x@studyflow.test>", pollIntervalMs: 60_000 };
    // A stored file's creation time is the database's (today), years before the replicas' clock:
    // with the default 90 days, the export file would be past retention the moment it exists, and
    // removed whenever the first round of remove-expired-exports ran after the task (a slow machine).
    // Ten years keeps it; the round itself still runs once.
    const exportRetention = { taskExportDays: 30, dailyExportDays: 3_650 };
    const replicas = [1, 2].map(() =>
      harness.start({
        maintenance: true,
        mail,
        clock: () => now,
        temporaryParticipantRetentionSeconds: 7 * DAY,
        exportRetention,
      }),
    );
    await Promise.all(replicas.map((replica) => replica.schedulesReady));

    const schedulers = await maintenance.getJobSchedulers();
    expect(schedulers.map((s) => [s.key, s.every]).sort()).toEqual([
      ["expire-temporary-participants", EXPIRE_TEMPORARY_EVERY_MS],
      ["fire-scheduled-emails", FIRE_SCHEDULED_EMAILS_EVERY_MS],
      ["prune-finished-tasks", PRUNE_FINISHED_TASKS_EVERY_MS],
      ["remove-expired-exports", REMOVE_EXPIRED_EXPORTS_EVERY_MS],
      ["start-daily-exports", DAILY_EXPORTS_EVERY_MS],
      ["sweep-expired-account-tokens", SWEEP_EXPIRED_ACCOUNT_TOKENS_EVERY_MS],
      ["sweep-management-sessions", SWEEP_MANAGEMENT_SESSIONS_EVERY_MS],
      ["sweep-stale-tasks", SWEEP_STALE_TASKS_EVERY_MS],
    ]);
    expect((await outbox.getJobSchedulers()).map((s) => [s.key, s.every])).toEqual([["deliver-due-messages", 60_000]]);
    // Both replicas' queues show on the dashboard and in metrics.
    expect(replicas[0]!.queues.map((queue) => queue.name)).toEqual([
      TASKS_QUEUE,
      MAINTENANCE_QUEUE,
      ACCOUNT_DELETION_QUEUE,
      OUTBOX_QUEUE,
    ]);

    // The first run of each schedule is due at once; one replica takes it.
    const deadline = Date.now() + 15_000;
    let completed = await maintenance.getJobs(["completed"]);
    while (completed.length < 8 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      completed = await maintenance.getJobs(["completed"]);
    }
    expect(completed.map((job) => job.name).sort()).toEqual([
      "expire-temporary-participants",
      "fire-scheduled-emails",
      "prune-finished-tasks",
      "remove-expired-exports",
      "start-daily-exports",
      "sweep-expired-account-tokens",
      "sweep-management-sessions",
      "sweep-stale-tasks",
    ]);
    // No second run by the other replica: the next runs wait for their interval.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await maintenance.getJobCounts("completed", "active", "waiting", "delayed")).toEqual({
      completed: 8,
      active: 0,
      waiting: 0,
      delayed: 8,
    });
    const sessionSweep = completed.find((job) => job.name === "sweep-management-sessions");
    expect(sessionSweep?.returnvalue).toEqual({ removed: 1, batches: 1 });
    const tokenSweep = completed.find((job) => job.name === "sweep-expired-account-tokens");
    expect(tokenSweep?.returnvalue).toEqual({ removed: 0, batches: 1 });
    const sessionsLeft = await harness.database.db.select({ id: managementSessions.id }).from(managementSessions);
    expect(sessionsLeft.map((row) => row.id)).toEqual(["00000000-0000-4000-8000-000000000002"]);
    const emailRound = completed.find((job) => job.name === "fire-scheduled-emails");
    expect(emailRound?.returnvalue).toEqual({ fired: 0, queued: 0, ended: 0 });
    const expired = completed.find((job) => job.name === "expire-temporary-participants");
    expect(expired?.returnvalue).toEqual({ removed: 1 });
    const left = await harness.database.db.select({ id: participants.participantId }).from(participants);
    expect(left.map((row) => row.id).sort()).toEqual(["new-temp", "old-active"]);

    // Yesterday's daily export: one task, run by the replicas' task workers, whose file holds yesterday's responses.
    const daily = completed.find((job) => job.name === "start-daily-exports");
    const started = (daily?.returnvalue as { started: { taskId: string; day: string }[] }).started;
    expect(started).toEqual([{ studyKey: "s", surveyKey: "weekly", day: "2030-12-31", taskId: expect.any(String) }]);
    await harness.waitForTask(started[0]!.taskId, ["completed"]);
    const listed = await listDailyExports(harness.database.db, "s");
    expect(listed).toEqual([
      expect.objectContaining({ surveyKey: "weekly", date: "2030-12-31", fileName: "weekly_json_2030-12-31.json.gz" }),
    ]);
    const file = await openDailyExport(harness.database.db, createFileStore(harness.database.db), "s", listed[0]!.id);
    const parts: Buffer[] = [];
    for await (const part of file.body) parts.push(part as Buffer);
    const exported = JSON.parse(gunzipSync(Buffer.concat(parts)).toString("utf8")) as {
      responses: { participantID: string }[];
    };
    expect(exported.responses.map((response) => response.participantID)).toEqual(["p1", "p2"]);
  });

  it("a runtime with maintenance off consumes no maintenance queue and keeps no schedule", async () => {
    const runtime = harness.start({ maintenance: false });
    await runtime.schedulesReady;
    // account deletions are participants' requests, not housekeeping: every runtime takes them
    expect(runtime.queues.map((queue) => queue.name)).toEqual([TASKS_QUEUE, ACCOUNT_DELETION_QUEUE]);
  });
});
