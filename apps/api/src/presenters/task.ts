import { z } from "@hono/zod-openapi";
import { TASK_STATUSES } from "@studyflow/db";
import type { TaskRow } from "@studyflow/domain";

/** The Task of the interface: timestamps as ISO 8601 strings. */
export const taskSchema = z
  .object({
    id: z.string(),
    createdAt: z.string().openapi({ format: "date-time" }),
    createdBy: z.string(),
    updatedAt: z.string().openapi({ format: "date-time" }),
    status: z.enum(TASK_STATUSES),
    targetCount: z.number().int(),
    processedCount: z.number().int(),
    resultFile: z.string(),
    fileType: z.string(),
    error: z.string(),
  })
  .openapi("Task");

/** How the task routes answer (and what each task event carries). */
export const taskEnvelope = z.object({ task: taskSchema });

export type ApiTask = z.infer<typeof taskSchema>;

export function presentTask(row: TaskRow): ApiTask {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    updatedAt: row.updatedAt.toISOString(),
    status: row.status,
    targetCount: row.targetCount,
    processedCount: row.processedCount,
    resultFile: row.resultFile,
    fileType: row.fileType,
    error: row.error,
  };
}
