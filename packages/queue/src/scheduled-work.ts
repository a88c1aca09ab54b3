import { z } from "zod";

/**
 * Periodic housekeeping that must run once per cluster, however many worker replicas there are.
 * Each kind is a BullMQ job scheduler on this queue: the scheduler makes one job per interval and
 * exactly one worker takes it, and the schedules show on the queue dashboard.
 */
export const MAINTENANCE_QUEUE = "maintenance";

export const maintenanceJobSchema = z.discriminatedUnion("kind", [
  /** Tasks that claim to run but whose jobs are gone: re-queued or failed. */
  z.object({ kind: z.literal("sweep-stale-tasks") }),
  /** Temporary participants past retention, with their confidential responses. */
  z.object({ kind: z.literal("expire-temporary-participants") }),
  /** Yesterday's export of every survey of every study with daily exports on (once per day, see the domain). */
  z.object({ kind: z.literal("start-daily-exports") }),
  /** Export files past retention: contents removed, files marked expired. */
  z.object({ kind: z.literal("remove-expired-exports") }),
  /** Finished tasks past retention, with their result documents and file records. */
  z.object({ kind: z.literal("prune-finished-tasks") }),
  /** case-admin's scheduled e-mails whose slot has come: their mails into the outbox, the slot moved on. */
  z.object({ kind: z.literal("fire-scheduled-emails") }),
  /**
   * Management sign-in sessions past their end, with the sealed refresh tokens they hold; and new
   * API keys' sealed copies past their reveal window.
   */
  z.object({ kind: z.literal("sweep-management-sessions") }),
  /** One-time account tokens (mailed links) past their expiry. */
  z.object({ kind: z.literal("sweep-expired-account-tokens") }),
]);
export type MaintenanceJob = z.infer<typeof maintenanceJobSchema>;

/**
 * E-mail delivery rounds of the outbox. A queue of its own, because only workers with SMTP
 * configured consume it; a worker without SMTP never takes a round it cannot deliver.
 */
export const OUTBOX_QUEUE = "outbox";

export const outboxJobSchema = z.object({ kind: z.literal("deliver-due-messages") });
export type OutboxJob = z.infer<typeof outboxJobSchema>;

/**
 * The study timer's scans. A queue of its own, consumed by workers that run the timer: one job
 * scheduler whose every job records the ticks that have fallen due (timer/ in the domain) and
 * queues each one's task on the tasks queue, where the ticks run like any bulk task.
 */
export const TIMER_QUEUE = "study-timer";

export const timerJobSchema = z.object({ kind: z.literal("start-due-ticks") });
export type TimerJob = z.infer<typeof timerJobSchema>;

export const scheduledJobOptions = {
  // A failed round is simply the next round's work: retrying it would only overlap with that.
  attempts: 1,
  // The schedule repeats every few seconds; finished rounds are kept only to be looked at.
  removeOnComplete: { count: 100 },
  removeOnFail: { count: 100 },
} as const;
