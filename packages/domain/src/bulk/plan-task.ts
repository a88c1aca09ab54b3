import { and, eq, inArray, sql } from "drizzle-orm";
import { taskChunks, tasks, type Database } from "@studyflow/db";
import { EXCLUDED_FROM_BULK, countEligibleParticipants, type TaskRow } from "../tasks/task-service";
import { CHUNK_SIZE } from "./bulk-tuning";

export interface PlannedChunk {
  chunkIndex: number;
  status: "pending" | "done";
}

/**
 * Starts a task: marks it in_progress and splits its participants into contiguous key ranges.
 * Idempotent: a planner that runs again (after a crash) finds the chunks already there.
 * Returns null when the task is gone or already ended.
 */
export async function planTask(
  db: Database,
  taskId: string,
  chunkSize = CHUNK_SIZE,
): Promise<{ task: TaskRow; chunks: PlannedChunk[] } | null> {
  return db.transaction(async (tx) => {
    const [task] = await tx.select().from(tasks).where(eq(tasks.id, taskId)).for("update");
    if (!task || !["queued", "in_progress"].includes(task.status)) return null;
    const existing = await tx
      .select({ chunkIndex: taskChunks.chunkIndex, status: taskChunks.status })
      .from(taskChunks)
      .where(eq(taskChunks.taskId, taskId))
      .orderBy(taskChunks.chunkIndex);
    if (existing.length > 0) return { task, chunks: existing };

    const eligible = await countEligibleParticipants(tx, task.studyKey);
    const boundaries =
      eligible > chunkSize
        ? (
            await tx.execute<{ participant_id: string }>(sql`
              select participant_id from (
                select participant_id, row_number() over (order by participant_id) as position
                from participants
                where study_key = ${task.studyKey}
                  and study_status not in (${sql.join(
                    EXCLUDED_FROM_BULK.map((status) => sql`${status}`),
                    sql`, `,
                  )})
              ) ranked
              where position % ${chunkSize} = 0
              order by participant_id`)
          ).map((row) => row.participant_id)
        : [];
    // Chunk i covers (boundary[i-1], boundary[i]]; the last one is open-ended so late arrivals are included.
    const ranges = [...boundaries, null].map((toKey, index) => ({
      taskId,
      chunkIndex: index,
      fromKey: index === 0 ? "" : (boundaries[index - 1] ?? ""),
      toKey,
      cursor: index === 0 ? "" : (boundaries[index - 1] ?? ""),
    }));
    await tx.insert(taskChunks).values(ranges);
    const now = new Date();
    const [started] = await tx
      .update(tasks)
      .set({ status: "in_progress", startedAt: task.startedAt ?? now, updatedAt: now, targetCount: eligible })
      .where(and(eq(tasks.id, taskId), inArray(tasks.status, ["queued", "in_progress"])))
      .returning();
    return {
      task: started ?? task,
      chunks: ranges.map((chunk) => ({ chunkIndex: chunk.chunkIndex, status: "pending" as const })),
    };
  });
}
