/**
 * How a bench waits for a task to end: told by PostgreSQL (LISTEN) when a task row's status
 * changes, then reading the row to see it completed. Polling every 5 ms cost the bench process
 * 50–80 ms of CPU per 0.5 s run (one query and a timer per look, in the process that also serves
 * the API) on the same two cores the workers and PostgreSQL need; a notification costs one
 * message. The span still ends only once the task row reads completed: a notification is sent
 * when its transaction commits, and a slow look every FALLBACK_POLL_MS covers one that is lost.
 */
import type { DbHandle } from "@studyflow/db";

const CHANNEL = "bench_task_status";

/**
 * How often a bench looks whether a task has completed when it polls: the span it measures
 * overstates the pipeline's by half of this on average (at 100,000 participants a floor takes
 * about 0.1 s).
 */
const POLL_MS = 5;
/** A look at the row without being told, in case a notification is lost (the listener reconnecting). */
const FALLBACK_POLL_MS = 250;

/** True once the task's row says completed; throws if it ended otherwise; false while it runs. */
async function hasCompleted(db: DbHandle, taskId: string): Promise<boolean> {
  const [row] = await db.sql<{ status: string; error: string }[]>`
    select status, error from tasks where id = ${taskId}`;
  if (row?.status === "completed") return true;
  if (row && row.status !== "in_progress" && row.status !== "queued")
    throw new Error(`task ${row.status}: ${row.error}`);
  return false;
}

/** Reads the task row every POLL_MS until it says completed. */
export async function pollUntilCompleted(db: DbHandle, taskId: string): Promise<void> {
  while (!(await hasCompleted(db, taskId))) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}

export interface TaskCompletionWatch {
  /** Resolves once the task row says completed; rejects if it ends otherwise. */
  completed: (taskId: string) => Promise<void>;
  close: () => Promise<void>;
}

/**
 * Installs, in the bench's own database, a trigger that notifies CHANNEL with the task's id when
 * its status changes, and listens on it.
 */
export async function watchTaskCompletion(db: DbHandle): Promise<TaskCompletionWatch> {
  await db.sql.unsafe(`
    create or replace function bench_notify_task_status() returns trigger language plpgsql as $$
    begin
      perform pg_notify('${CHANNEL}', new.id::text);
      return null;
    end $$;
    create or replace trigger bench_task_status after update of status on tasks
      for each row when (old.status is distinct from new.status) execute function bench_notify_task_status();`);
  const waiting = new Map<string, () => void>();
  const listener = await db.sql.listen(CHANNEL, (taskId) => waiting.get(taskId)?.());

  async function completed(taskId: string): Promise<void> {
    for (;;) {
      const told = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FALLBACK_POLL_MS);
        waiting.set(taskId, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      // looked at after the listener is set, so a change committed in between is not missed
      try {
        if (await hasCompleted(db, taskId)) {
          waiting.delete(taskId);
          return;
        }
      } catch (error) {
        waiting.delete(taskId);
        throw error;
      }
      await told;
    }
  }

  return {
    completed,
    close: async () => {
      await listener.unlisten();
      await db.sql.unsafe(`drop trigger if exists bench_task_status on tasks`);
    },
  };
}
