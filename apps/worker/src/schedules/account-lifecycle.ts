import type { Queue } from "bullmq";
import { lifecycleStepEnabled, type AccountLifecycleSettings } from "@studyflow/domain/participant-accounts";
import type { AccountLifecycleJob } from "@studyflow/queue";
import { upsertSchedules, type ClusterSchedule } from "./upsert-schedules";

/**
 * How often each account lifecycle round runs. Its times are days to a year and each account is
 * handled once (the marks and the deletion request are committed with the mail), so hourly means
 * an account is handled at most an hour late, and a round that finds nothing is one query.
 */
export const ACCOUNT_LIFECYCLE_EVERY_MS = 60 * 60_000;

const ROUNDS: readonly {
  kind: AccountLifecycleJob["kind"];
  enabled: (settings: AccountLifecycleSettings) => boolean;
}[] = [
  { kind: "remove-unverified-accounts", enabled: (s) => lifecycleStepEnabled(s, "remove-unverified") },
  { kind: "remind-unverified-accounts", enabled: (s) => lifecycleStepEnabled(s, "remind-unverified") },
  { kind: "handle-inactive-accounts", enabled: (s) => lifecycleStepEnabled(s, "notify-inactive") },
];

/** The job schedulers of the enabled rounds; none when no lifecycle setting is set. */
export function accountLifecycleSchedules(
  settings: AccountLifecycleSettings | undefined,
  everyMs = ACCOUNT_LIFECYCLE_EVERY_MS,
): ClusterSchedule<AccountLifecycleJob>[] {
  if (settings === undefined) return [];
  return ROUNDS.filter((round) => round.enabled(settings)).map((round) => ({
    id: round.kind,
    every: everyMs,
    data: { kind: round.kind },
  }));
}

/**
 * Puts the enabled rounds' schedulers in place and removes those of rounds switched off: a
 * scheduler lives in Redis, so one left from an earlier configuration would go on firing. Every
 * replica does this at start, so all replicas must carry the same ACCOUNT_* settings.
 */
export async function syncAccountLifecycleSchedules(
  queue: Queue,
  settings: AccountLifecycleSettings | undefined,
  everyMs = ACCOUNT_LIFECYCLE_EVERY_MS,
): Promise<void> {
  const wanted = accountLifecycleSchedules(settings, everyMs);
  for (const round of ROUNDS) {
    if (!wanted.some((schedule) => schedule.id === round.kind)) await queue.removeJobScheduler(round.kind);
  }
  await upsertSchedules(queue, wanted);
}
