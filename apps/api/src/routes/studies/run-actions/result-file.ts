import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "@hono/zod-openapi";
import { Conflict, NotFound } from "@studyflow/domain/errors";
import { type TaskRow } from "@studyflow/domain/tasks";

/** The document a worker writes when a task (run-actions or a timer tick) completes. */
export const resultDocumentSchema = z
  .object({
    participantCount: z.number().int(),
    participantStateChangedPerRule: z.array(z.number().int()),
    errorCount: z.number().int(),
    errors: z.array(z.object({ participantId: z.string(), error: z.string() })),
    durationMs: z.number(),
    dryRun: z.boolean(),
    tick: z
      .object({ dueAt: z.string().openapi({ format: "date-time" }), rulesVersion: z.number().int() })
      .optional()
      .openapi({ description: "a timer tick's slot and the study rules version it ran; absent for run-actions" }),
  })
  .openapi("RunActionsResult");

export type ResultDocument = z.infer<typeof resultDocumentSchema>;

/** Resolves a task's result file inside the result directory, refusing anything that escapes it. */
export function resultPath(resultDir: string, resultFile: string): string {
  const root = path.resolve(resultDir);
  const full = path.resolve(root, resultFile);
  if (!full.startsWith(root + path.sep)) throw new NotFound("result file not found");
  return full;
}

/** The result document of a completed task, read from the file store the workers share. */
export async function readResultDocument(resultDir: string, task: TaskRow): Promise<ResultDocument> {
  if (task.kind.startsWith("export-")) {
    // an export's result is its file, served (as CASE does) by the data exporter
    const group = task.kind.slice("export-".length);
    throw new NotFound(
      `task ${task.id} is an export: download its file from /v1/studies/${task.studyKey}/data-exporter/${group}/task/${task.id}/result`,
    );
  }
  if (task.status !== "completed") throw new Conflict(`task has not completed (status "${task.status}")`);
  if (!task.resultFile) throw new NotFound("task has no result file");
  let text: string;
  try {
    text = await readFile(resultPath(resultDir, task.resultFile), "utf8");
  } catch {
    throw new NotFound("result file not found; it may have been removed from the file store");
  }
  return JSON.parse(text) as ResultDocument;
}
