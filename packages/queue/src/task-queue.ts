import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { RUN_ACTIONS_QUEUE, runActionsJobOptions, taskJobId, taskJobName, type RunActionsJob } from "./run-actions";

/**
 * The queue every task kind runs on (run-actions, timer ticks, exports): one chunk pipeline in the
 * worker serves them all, so they share one queue. It keeps its historical name, "run-actions".
 */
export function createTaskQueue(connection: Redis, prefix: string): Queue {
  return new Queue(RUN_ACTIONS_QUEUE, { connection, prefix });
}

/**
 * Queues a recorded task's job. Every producer (API routes, the CLI, the timer, the sweeper, the
 * daily exports) goes through here, so the job's name, id and retry options live in one place;
 * jobId = taskId makes a second call for the same task a no-op.
 */
export async function queueTask(queue: Queue, task: { id: string; kind: string }): Promise<void> {
  const job: RunActionsJob = { kind: "task", taskId: task.id };
  await queue.add(taskJobName(task.kind), job, { ...runActionsJobOptions, jobId: taskJobId(task.id) });
}
