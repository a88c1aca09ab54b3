import type { Logger } from "pino";
import type { Database } from "@studyflow/db";
import { fireDueScheduledEmails, type ScheduledEmailsRound } from "@studyflow/domain/messages";
import type { MaintenanceJob } from "@studyflow/queue";
import type { ClusterSchedule } from "./upsert-schedules";

/** The job of case-admin's scheduled e-mails (maintenance queue): one round of due schedules. */
export type ScheduledEmailsJob = Extract<MaintenanceJob, { kind: "fire-scheduled-emails" }>;

/**
 * How often due scheduled e-mails are looked for. Schedules are set to the minute in case-admin
 * and repeat daily or weekly, so a slot is sent at most a minute late; a round that finds
 * nothing due is one indexed query.
 */
export const FIRE_SCHEDULED_EMAILS_EVERY_MS = 60_000;

/**
 * The cluster-wide scheduler of the round (one BullMQ job scheduler: one job per interval, one
 * worker takes it). A round that overlaps another anyway (a slow round, a restarted scheduler)
 * fires nothing twice: each schedule is claimed by moving its nextTime in the transaction that
 * queues its mails.
 */
export const scheduledEmailsSchedule = (
  everyMs = FIRE_SCHEDULED_EMAILS_EVERY_MS,
): ClusterSchedule<ScheduledEmailsJob> => ({
  id: "fire-scheduled-emails",
  every: everyMs,
  data: { kind: "fire-scheduled-emails" },
});

/** One round: every due schedule fired into the outbox; one log line when anything happened. */
export async function runScheduledEmailsRound(deps: {
  db: Database;
  logger: Logger;
  clock: () => number;
}): Promise<ScheduledEmailsRound> {
  const round = await fireDueScheduledEmails(deps.db, new Date(deps.clock()));
  if (round.fired > 0) deps.logger.info({ ...round }, "scheduled e-mails fired");
  return round;
}
