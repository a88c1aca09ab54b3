import { Option } from "commander";
import { z } from "zod";
import { Invalid, getVisibleTask } from "@studyflow/domain";
import { defineCommand } from "../command-definition";
import { requireStudy } from "../command-support";
import { studyKey, text } from "../flag-values";
import {
  OPERATOR,
  followAndDownload,
  followFlags,
  followValues,
  type ExportContext,
  type FollowOptions,
} from "./export-task";

export interface ExportFollowInput extends FollowOptions {
  taskId: string;
}

export async function exportFollow(ctx: ExportContext, input: ExportFollowInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  const task = await getVisibleTask(ctx.database.db, input.studyKey, input.taskId, OPERATOR);
  if (!task.kind.startsWith("export-")) {
    throw new Invalid(`task ${task.id} is a ${task.kind} task, not an export (see the console's task list)`);
  }
  return followAndDownload(ctx, input, task);
}

export const exportFollowCommand = defineCommand({
  name: "export:follow",
  summary: "follow an export task already started (after Ctrl-C or --no-wait) and download its file",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--task <ID>", "the export task's id, as the starting command printed it").makeOptionMandatory(),
    ...followFlags(),
  ],
  values: z.object({ study: studyKey, task: text, ...followValues }).transform((values): ExportFollowInput => ({
    studyKey: values.study,
    taskId: values.task,
    out: values.out,
    cancelOnInterrupt: values.cancelOnInterrupt,
  })),
  uses: "database",
  run: exportFollow,
});
