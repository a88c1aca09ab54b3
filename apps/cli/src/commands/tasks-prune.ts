import { Option } from "commander";
import { z } from "zod";
import { createFileStore } from "@studyflow/domain/files";
import { countPrunableTasks, pruneFinishedTasks, type PruneSummary } from "@studyflow/domain/tasks";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey, switchFlag } from "../flag-values";
import { createProgressReporter, progressModeFor, type ProgressStream } from "../progress";
import { retentionDefaultsOf } from "./study-task-retention";

export interface TasksPruneInput {
  studyKey?: string;
  dryRun: boolean;
}

/** What tests put into the context: where progress goes. */
export type TasksPruneContext = CliContext & { progress?: ProgressStream };

function summaryLines(summary: PruneSummary, dryRun: boolean): string[] {
  const verb = dryRun ? "would remove" : "removed";
  const total = `${verb} ${summary.tasks} task(s), ${summary.timerTicks} timer tick(s), ${summary.files} export file record(s)`;
  return [
    summary.studies.length === 0 ? `nothing past retention${dryRun ? " (dry run)" : ""}` : total,
    ...summary.studies.map(
      (study) =>
        `  ${study.studyKey}: ${study.tasks} task(s) (after ${study.days === 0 ? "forever" : `${study.days} d`}), ` +
        `${study.timerTicks} tick(s) (after ${study.timerDays === 0 ? "forever" : `${study.timerDays} d`}), ${study.files} file(s)`,
    ),
  ];
}

/**
 * What the workers' hourly retention round does, now and without its time budget: every finished
 * task past its study's retention, with its result document and export file record. `--dry-run`
 * counts and removes nothing.
 */
export async function tasksPrune(ctx: TasksPruneContext, input: TasksPruneInput) {
  const db = ctx.database.db;
  const base = {
    now: ctx.clock(),
    defaults: retentionDefaultsOf(ctx),
    ...(input.studyKey === undefined ? {} : { studyKey: input.studyKey }),
  };
  const planned = await countPrunableTasks(db, base);
  if (input.dryRun) {
    const data = { dryRun: true, ...planned };
    ctx.output.result(data, summaryLines(planned, true));
    return data;
  }
  const stream = ctx.progress ?? process.stderr;
  const targetCount = planned.tasks + planned.timerTicks;
  const reporter = createProgressReporter({
    mode: targetCount === 0 ? "none" : progressModeFor(stream, ctx.output.json),
    stream,
    label: "prune",
    unit: "tasks",
    clock: ctx.clock,
  });
  let summary: PruneSummary;
  try {
    reporter.update({ status: "in_progress", processedCount: 0, targetCount });
    summary = await pruneFinishedTasks(db, {
      clock: ctx.clock,
      ...base,
      resultDir: ctx.config.RESULT_DIR,
      files: createFileStore(db, { backend: ctx.config.EXPORT_FILE_STORE, directory: ctx.config.RESULT_DIR }),
      onProgress: (removed) =>
        reporter.update({
          status: "in_progress",
          processedCount: removed,
          targetCount: Math.max(targetCount, removed),
        }),
    });
    reporter.update({ status: "completed", processedCount: summary.tasks + summary.timerTicks, targetCount });
  } finally {
    reporter.stop();
  }
  const data = { dryRun: false, ...summary };
  ctx.output.result(data, summaryLines(summary, false));
  return data;
}

export const tasksPruneCommand = defineCommand({
  name: "tasks:prune",
  summary: "remove finished tasks past retention now, with their result documents and file records",
  flags: () => [
    new Option("--study <KEY>", "only this study's tasks"),
    new Option("--dry-run", "count what would be removed, remove nothing"),
  ],
  values: z
    .object({ study: studyKey.optional(), dryRun: switchFlag })
    .transform(({ study, dryRun }): TasksPruneInput => ({
      dryRun,
      ...(study === undefined ? {} : { studyKey: study }),
    })),
  uses: "database",
  run: tasksPrune,
});
