import { Queue } from "bullmq";
import { ACCOUNT_DELETION_QUEUE, queueAccountDeletion } from "@studyflow/queue";
import type { AppDeps } from "../../deps";

const queues = new WeakMap<AppDeps, Queue>();

/**
 * Queues a recorded deletion's job for the workers. One producer per app, over the app's Redis
 * connection (a Queue adds no connection of its own when handed one). A lost enqueue is not an
 * error the caller must see: the row is committed, and the workers' sweep queues it within minutes.
 */
export async function queueDeletionJob(deps: AppDeps, deletionId: string): Promise<boolean> {
  let queue = queues.get(deps);
  if (!queue) {
    queue = new Queue(ACCOUNT_DELETION_QUEUE, { connection: deps.redis, prefix: deps.config.QUEUE_PREFIX });
    queues.set(deps, queue);
  }
  try {
    await queueAccountDeletion(queue, deletionId);
    return true;
  } catch (error) {
    deps.logger.warn({ err: error, deletionId }, "could not queue an account deletion; the workers' sweep will");
    return false;
  }
}
