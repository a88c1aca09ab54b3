import { Option } from "commander";
import { z } from "zod";
import {
  TASK_RETENTION_DEFAULTS,
  getStudyTaskRetention,
  updateStudyTaskRetention,
  type StudyTaskRetention,
  type StudyTaskRetentionChange,
  type TaskRetentionDefaults,
} from "@studyflow/domain/tasks";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { studyKey, text, wholeNumber } from "../flag-values";
import { fieldLines } from "../output";

export interface StudyTaskRetentionInput {
  studyKey: string;
  /** Absent: show only. */
  change?: StudyTaskRetentionChange;
}

/** The deployment's retention, as the workers read it. */
export const retentionDefaultsOf = (ctx: CliContext): TaskRetentionDefaults => ({
  days: ctx.config.TASK_RETENTION_DAYS,
  timerDays: ctx.config.TIMER_TASK_RETENTION_DAYS,
});

const days = (value: number) => (value === 0 ? "forever" : `${value} ${value === 1 ? "day" : "days"}`);
const own = (value: number | null, effective: number, setting: string) =>
  value === null ? `default (${days(effective)}, ${setting})` : days(value);

function printRetention(ctx: CliContext, state: StudyTaskRetention, heading: string) {
  const data = { taskRetention: state };
  ctx.output.result(data, [
    heading,
    ...fieldLines([
      ["run-actions, exports", own(state.days, state.effectiveDays, "TASK_RETENTION_DAYS")],
      ["timer ticks", own(state.timerDays, state.effectiveTimerDays, "TIMER_TASK_RETENTION_DAYS")],
      ["changed", state.updatedBy === null ? undefined : `${state.updatedAt?.toISOString()} by ${state.updatedBy}`],
    ]),
  ]);
  return data;
}

export async function studyTaskRetention(ctx: CliContext, input: StudyTaskRetentionInput) {
  const defaults = retentionDefaultsOf(ctx);
  if (input.change === undefined) {
    const state = await getStudyTaskRetention(ctx.database.db, input.studyKey, defaults);
    return printRetention(ctx, state, `task retention of study "${input.studyKey}"`);
  }
  const state = await updateStudyTaskRetention(
    ctx.database.db,
    input.studyKey,
    input.change,
    UPLOADED_BY,
    defaults,
    new Date(ctx.clock()),
  );
  return printRetention(ctx, state, `task retention of study "${input.studyKey}" set`);
}

const { maxDays } = TASK_RETENTION_DEFAULTS;

/** `N` days, `off` (0: keep forever) or `default` (null). */
const daysValue = text.transform((raw, ctx): number | null => {
  if (raw === "default") return null;
  if (raw === "off") return 0;
  const parsed = wholeNumber(0, maxDays).safeParse(raw);
  if (parsed.success) return parsed.data;
  ctx.addIssue({
    code: "custom",
    message: `must be a whole number of days from 0 to ${maxDays}, "off" (keep forever) or "default", got "${raw}"`,
  });
  return z.NEVER;
});

export const studyTaskRetentionCommand = defineCommand({
  name: "study:task-retention",
  summary: "show or set how long a study's finished tasks are kept (audited)",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option(
      "--days <DAYS>",
      `days finished run-actions and export tasks are kept, 0 to ${maxDays}; "off" keeps forever, "default" for TASK_RETENTION_DAYS`,
    ),
    new Option(
      "--timer-days <DAYS>",
      `days finished timer ticks are kept; "off" keeps forever, "default" for TIMER_TASK_RETENTION_DAYS`,
    ),
  ],
  values: z
    .object({ study: studyKey, days: daysValue.optional(), timerDays: daysValue.optional() })
    .transform(({ study, days, timerDays }): StudyTaskRetentionInput => {
      if (days === undefined && timerDays === undefined) return { studyKey: study };
      return {
        studyKey: study,
        change: {
          ...(days === undefined ? {} : { days }),
          ...(timerDays === undefined ? {} : { timerDays }),
        },
      };
    }),
  uses: "database",
  run: studyTaskRetention,
});
