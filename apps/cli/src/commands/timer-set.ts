import { Option } from "commander";
import { z } from "zod";
import {
  MAX_TIMER_INTERVAL_SECONDS,
  MIN_TIMER_INTERVAL_SECONDS,
  updateStudyTimer,
  type StudyTimerChange,
} from "@studyflow/domain/timer";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { UsageError } from "../failures";
import { studyKey, text, wholeNumber } from "../flag-values";
import { printTimer } from "./timer-show";

export interface TimerSetInput {
  studyKey: string;
  change: StudyTimerChange;
}

export async function timerSet(ctx: CliContext, input: TimerSetInput) {
  const state = await updateStudyTimer(ctx.database.db, input.studyKey, input.change, UPLOADED_BY, {
    now: ctx.clock(),
    defaultIntervalSeconds: ctx.config.TIMER_INTERVAL_SECONDS,
  });
  return printTimer(ctx, state, `timer of study "${input.studyKey}" set`);
}

const intervalValue = text.transform((raw, ctx): number | null => {
  if (raw === "default") return null;
  const parsed = wholeNumber(MIN_TIMER_INTERVAL_SECONDS, MAX_TIMER_INTERVAL_SECONDS).safeParse(raw);
  if (parsed.success) return parsed.data;
  ctx.addIssue({
    code: "custom",
    message: `must be a whole number from ${MIN_TIMER_INTERVAL_SECONDS} to ${MAX_TIMER_INTERVAL_SECONDS}, or "default", got "${raw}"`,
  });
  return z.NEVER;
});

export const timerSetCommand = defineCommand({
  name: "timer:set",
  summary: "set a study's timer: seconds between ticks and their offset from the epoch's grid (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option(
      "--interval <SECONDS>",
      `seconds between ticks, ${MIN_TIMER_INTERVAL_SECONDS} to ${MAX_TIMER_INTERVAL_SECONDS}; "default" for the workers' TIMER_INTERVAL_SECONDS`,
    ),
    new Option(
      "--offset <SECONDS>",
      "shift of the ticks, less than the interval (e.g. 7200 with 86400: daily at 02:00 UTC)",
    ),
  ],
  values: z
    .object({
      study: studyKey,
      interval: intervalValue.optional(),
      offset: wholeNumber(0, MAX_TIMER_INTERVAL_SECONDS - 1).optional(),
    })
    .transform(({ study, interval, offset }): TimerSetInput => {
      if (interval === undefined && offset === undefined) throw new UsageError("give --interval, --offset or both");
      return {
        studyKey: study,
        change: {
          ...(interval === undefined ? {} : { intervalSeconds: interval }),
          ...(offset === undefined ? {} : { offsetSeconds: offset }),
        },
      };
    }),
  uses: "database",
  run: timerSet,
});
