import { Option } from "commander";
import { z } from "zod";
import { getStudyTimer, type StudyTimerState } from "@studyflow/domain/timer";
import { presentStudyTimer } from "@studyflow/presenters/task";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey } from "../flag-values";
import { fieldLines } from "../output";

/** The interval as people read it: 3600 → "3600 s (1 h)". */
function seconds(value: number): string {
  const units: [number, string][] = [
    [86_400, "d"],
    [3_600, "h"],
    [60, "min"],
  ];
  const unit = units.find(([size]) => value >= size && value % size === 0);
  return unit ? `${value} s (${value / unit[0]} ${unit[1]})` : `${value} s`;
}

/**
 * The timer as every timer command prints it: one JSON object, or aligned lines for people. The
 * default interval is TIMER_INTERVAL_SECONDS, read as the workers read it.
 */
export function printTimer(ctx: CliContext, state: StudyTimerState, heading: string) {
  const tick = state.lastTick;
  // The API's StudyTimer, but with the last tick flat (taskId): scripts read the CLI's own shape.
  const data = {
    timer: {
      ...presentStudyTimer(state),
      lastTick: tick && {
        taskId: tick.id,
        dueAt: tick.input.dueAt,
        status: tick.status,
        processedCount: tick.processedCount,
        targetCount: tick.targetCount,
        error: tick.error,
      },
    },
  };
  const whyNoTicks = !state.studyActive
    ? "none: the study is inactive"
    : state.paused
      ? "none: paused (timer:resume)"
      : !state.handlesTimer
        ? "none: the study's rules do not handle TIMER"
        : undefined;
  ctx.output.result(data, [
    heading,
    ...fieldLines([
      [
        "interval",
        state.intervalSeconds === null
          ? `default (${seconds(state.effectiveIntervalSeconds)}, TIMER_INTERVAL_SECONDS)`
          : seconds(state.intervalSeconds),
      ],
      ["offset", seconds(state.offsetSeconds)],
      ["paused", state.paused ? "yes" : "no"],
      ["rules handle TIMER", state.handlesTimer ? "yes" : "no"],
      [
        "next tick",
        whyNoTicks ??
          (state.dueNow
            ? `due now: its slot began ${state.nextTickAt?.toISOString()}; the timer starts it within a minute`
            : state.nextTickAt?.toISOString()),
      ],
      [
        "last tick",
        tick
          ? `${tick.input.dueAt}  ${tick.status}  ${tick.processedCount}/${tick.targetCount}  task ${tick.id}${tick.error ? `  (${tick.error})` : ""}`
          : "none yet",
      ],
      ["changed", state.updatedBy === null ? undefined : `${state.updatedAt?.toISOString()} by ${state.updatedBy}`],
    ]),
  ]);
  return data;
}

export async function timerShow(ctx: CliContext, input: { studyKey: string }) {
  const state = await getStudyTimer(ctx.database.db, input.studyKey, {
    now: ctx.clock(),
    defaultIntervalSeconds: ctx.config.TIMER_INTERVAL_SECONDS,
  });
  return printTimer(ctx, state, `timer of study "${input.studyKey}"`);
}

export const timerShowCommand = defineCommand({
  name: "timer:show",
  summary: "show a study's timer: interval, offset, paused, whether its rules handle TIMER, last and next tick",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform(({ study }) => ({ studyKey: study })),
  uses: "database",
  run: timerShow,
});
