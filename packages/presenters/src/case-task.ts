import { z } from "@hono/zod-openapi";
import type { TaskRow } from "@studyflow/domain/tasks";

/**
 * A Task as CASE's management API shows it (`{task}` of the data-exporter routes), so clients
 * written for CASE (case-admin's export tracker) follow studyflow's tasks unchanged.
 *
 * CASE knows two statuses, `in_progress` and `completed`; a failure there is `completed` with a
 * non-empty `error`. case-admin polls until `completed` and then shows `error` if there is one, so
 * a failed or canceled task is shown the same way here — otherwise case-admin would poll a failed
 * task forever. The real status stays in `studyflowStatus`.
 */
export const caseTaskSchema = z
  .object({
    id: z.string(),
    createdAt: z.string().openapi({ format: "date-time" }),
    createdBy: z.string(),
    updatedAt: z.string().openapi({ format: "date-time" }),
    status: z.enum(["in_progress", "completed"]).openapi({
      description:
        "CASE's status: `in_progress` until the task ends, then `completed`; a failed or canceled task is " +
        "`completed` with `error` set (as CASE reports failures)",
    }),
    targetCount: z.number().int(),
    processedCount: z.number().int(),
    resultFile: z.string().openapi({ description: "the result file's name in the file store; empty until completed" }),
    fileType: z.string().openapi({ example: "text/csv" }),
    error: z.string().optional().openapi({ description: "why the task failed or was canceled; absent otherwise" }),
    studyflowStatus: z.string().openapi({
      description: "studyflow's own status: queued, in_progress, completed, failed or canceled",
    }),
  })
  .openapi("CaseTask");

export type CaseTask = z.infer<typeof caseTaskSchema>;

export const caseTaskEnvelope = z.object({ task: caseTaskSchema });

export function presentCaseTask(row: TaskRow): CaseTask {
  const ended = row.status !== "queued" && row.status !== "in_progress";
  let error = row.error;
  if (row.status === "canceled" && !error) error = "task was canceled";
  if (row.status === "failed" && !error) error = "task failed";
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    updatedAt: row.updatedAt.toISOString(),
    status: ended ? "completed" : "in_progress",
    targetCount: row.targetCount,
    processedCount: row.processedCount,
    resultFile: row.resultFile,
    fileType: row.fileType,
    ...(error ? { error } : {}),
    studyflowStatus: row.status,
  };
}
