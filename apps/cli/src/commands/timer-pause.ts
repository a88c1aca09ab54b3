import { Option } from "commander";
import { z } from "zod";
import { updateStudyTimer } from "@studyflow/domain/timer";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { studyKey } from "../flag-values";
import { printTimer } from "./timer-show";

export async function timerPause(ctx: CliContext, input: { studyKey: string }) {
  const state = await updateStudyTimer(ctx.database.db, input.studyKey, { paused: true }, UPLOADED_BY, {
    now: ctx.clock(),
    defaultIntervalSeconds: ctx.config.TIMER_INTERVAL_SECONDS,
  });
  return printTimer(ctx, state, `timer of study "${input.studyKey}" paused`);
}

export const timerPauseCommand = defineCommand({
  name: "timer:pause",
  summary: "pause a study's timer: no further ticks until timer:resume (a running tick finishes; audited)",
  flags: () => [new Option("--study <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ study: studyKey }).transform(({ study }) => ({ studyKey: study })),
  uses: "database",
  run: timerPause,
});
