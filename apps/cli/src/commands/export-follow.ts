import { Option } from "commander";
import { z } from "zod";
import { Invalid } from "@studyflow/domain/errors";
import { getVisibleTask } from "@studyflow/domain/tasks";
import { defineCommand } from "../command-definition";
import { requireStudy } from "../command-support";
import { text } from "../flag-values";
import {
  OPERATOR,
  followAndDownload,
  followFlags,
  followInput,
  followValues,
  studyFlag,
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
    studyFlag(),
    new Option("--task <ID>", "the export task's id, as the starting command printed it").makeOptionMandatory(),
    ...followFlags(),
  ],
  values: z
    .object({ task: text, ...followValues })
    .transform((values): ExportFollowInput => ({ ...followInput(values), taskId: values.task })),
  uses: "database",
  run: exportFollow,
});
