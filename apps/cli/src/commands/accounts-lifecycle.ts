import { Option } from "commander";
import { z } from "zod";
import {
  ACCOUNT_LIFECYCLE_STEPS,
  lifecycleStepEnabled,
  planAccountLifecycle,
  type AccountLifecycleCandidate,
  type AccountLifecycleStep,
  type AccountLifecycleTimes,
} from "@studyflow/domain/participant-accounts";
import { defineCommand, type CliContext } from "../command-definition";
import type { CliConfig } from "../config";
import { switchFlag, wholeNumber } from "../flag-values";

export interface AccountsLifecycleInput {
  limit: number;
}

/** The lifecycle times as the workers read them: the same ACCOUNT_* settings. */
export function lifecycleTimesOf(config: CliConfig): AccountLifecycleTimes {
  return {
    unverifiedDeleteAfterSeconds: config.ACCOUNT_UNVERIFIED_DELETE_AFTER_SECONDS,
    unverifiedReminderAfterSeconds: config.ACCOUNT_UNVERIFIED_REMINDER_AFTER_SECONDS,
    inactiveNotifyAfterSeconds: config.ACCOUNT_INACTIVE_NOTIFY_AFTER_SECONDS,
    inactiveDeleteAfterNoticeSeconds: config.ACCOUNT_INACTIVE_DELETE_AFTER_NOTICE_SECONDS,
  };
}

const VERB: Record<AccountLifecycleStep, string> = {
  "remove-unverified": "would delete (address never proven)",
  "remind-unverified": "would remind to confirm the address",
  "delete-inactive": "would delete (inactive after the notice)",
  "notify-inactive": "would notify of inactivity",
};

const iso = (at: Date | null) => (at === null ? null : at.toISOString());

function candidateLine(candidate: AccountLifecycleCandidate): string {
  const notified = candidate.inactivityNotifiedAt ? `, notified ${iso(candidate.inactivityNotifiedAt)}` : "";
  return `  ${candidate.userId}  created ${iso(candidate.createdAt)}, last active ${iso(candidate.lastActivityAt)}${notified}`;
}

/**
 * What the workers' next account lifecycle rounds would do now, with this process's ACCOUNT_*
 * settings: the accounts of each enabled step, oldest first, at most `limit` per step. Changes
 * nothing; the workers run the rounds. Accounts are named by id only, not by address.
 */
export async function accountsLifecycleDryRun(ctx: CliContext, input: AccountsLifecycleInput) {
  const times = lifecycleTimesOf(ctx.config);
  const now = new Date(ctx.clock());
  const plan = await planAccountLifecycle(ctx.database.db, times, { now, limit: input.limit });
  const off = ACCOUNT_LIFECYCLE_STEPS.filter((step) => !lifecycleStepEnabled(times, step));
  const steps = Object.fromEntries(
    ACCOUNT_LIFECYCLE_STEPS.flatMap((step) => {
      const candidates = plan[step];
      if (candidates === undefined) return [];
      return [
        [
          step,
          candidates.map((candidate) => ({
            userId: candidate.userId,
            createdAt: iso(candidate.createdAt),
            lastActivityAt: iso(candidate.lastActivityAt),
            inactivityNotifiedAt: iso(candidate.inactivityNotifiedAt),
          })),
        ],
      ];
    }),
  );
  const lines: string[] = [];
  for (const step of ACCOUNT_LIFECYCLE_STEPS) {
    const candidates = plan[step];
    if (candidates === undefined) continue;
    const more = candidates.length === input.limit ? " (limit reached: there may be more)" : "";
    lines.push(`${step}: ${VERB[step]}: ${candidates.length} account(s)${more}`, ...candidates.map(candidateLine));
  }
  lines.push(off.length === 0 ? "no step is off" : `off (not configured): ${off.join(", ")}`);
  const data = { dryRun: true, now: now.toISOString(), limit: input.limit, steps, off };
  ctx.output.result(data, lines);
  return data;
}

export const accountsLifecycleCommand = defineCommand({
  name: "accounts:lifecycle",
  summary: "list what the workers' next account lifecycle rounds would do (--dry-run): reminders, notices, deletions",
  flags: () => [
    new Option("--dry-run", "list the accounts each enabled step would handle now; change nothing (required)"),
    new Option("--limit <N>", "accounts listed per step (1 … 10000, default 100)"),
  ],
  values: z
    .object({ dryRun: switchFlag, limit: wholeNumber(1, 10_000).optional() })
    .refine((values) => values.dryRun, {
      message: "accounts:lifecycle only lists (--dry-run): the workers run the rounds",
      path: ["dryRun"],
    })
    .transform(({ limit }): AccountsLifecycleInput => ({ limit: limit ?? 100 })),
  uses: "database",
  run: accountsLifecycleDryRun,
});
