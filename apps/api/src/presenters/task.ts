import type { TaskStatus } from "@studyflow/db";
import type { TaskRow } from "@studyflow/domain";

/** The Task of the interface: timestamps as ISO 8601 strings. */
export interface ApiTask {
  id: string;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  status: TaskStatus;
  targetCount: number;
  processedCount: number;
  resultFile: string;
  fileType: string;
  error: string;
}

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
