import { z } from "zod";

/**
 * The account lifecycle rounds (case-backend's user-management job): a queue of its own with one
 * job scheduler per enabled step, so a round never waits behind housekeeping or a deletion, and
 * exactly one worker of the cluster takes each job.
 */
export const ACCOUNT_LIFECYCLE_QUEUE = "account-lifecycle";

export const accountLifecycleJobSchema = z.discriminatedUnion("kind", [
  /** Accounts whose address was never proven, past ACCOUNT_UNVERIFIED_DELETE_AFTER_SECONDS: deleted. */
  z.object({ kind: z.literal("remove-unverified-accounts") }),
  /** Accounts whose address is still unproven, past ACCOUNT_UNVERIFIED_REMINDER_AFTER_SECONDS: one reminder. */
  z.object({ kind: z.literal("remind-unverified-accounts") }),
  /** Accounts inactive past ACCOUNT_INACTIVE_NOTIFY_AFTER_SECONDS: notified; after the grace period, deleted. */
  z.object({ kind: z.literal("handle-inactive-accounts") }),
]);
export type AccountLifecycleJob = z.infer<typeof accountLifecycleJobSchema>;
