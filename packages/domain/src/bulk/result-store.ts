import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";

export interface RunActionsResult {
  participantCount: number;
  participantStateChangedPerRule: number[];
  /** Participants with at least one failed rule or skipped action (each counted once). */
  errorCount: number;
  errors: { participantId: string; error: string }[];
  durationMs: number;
  dryRun: boolean;
  /** A timer tick's slot and the study rules version it ran; absent for run-actions. */
  tick?: { dueAt: string; rulesVersion: number };
}

/**
 * Writes a task's result document into the shared file store and returns its path relative to
 * the store root. Written to a temporary name and renamed, so a reader never sees half a file.
 */
export async function writeResultFile(
  resultDir: string,
  studyKey: string,
  taskId: string,
  result: RunActionsResult,
): Promise<string> {
  const relative = path.join(encodeURIComponent(studyKey), `${taskId}.json`);
  const full = path.join(resultDir, relative);
  await mkdir(path.dirname(full), { recursive: true });
  const temporary = `${full}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(result)}\n`, "utf8");
  await rename(temporary, full);
  return relative;
}
