import type { Queue } from "bullmq";
import { Hono, type Context } from "hono";
import { basicAuth } from "hono/basic-auth";
import type { Logger } from "pino";
import { MAINTENANCE_QUEUE, OUTBOX_QUEUE, TASKS_QUEUE, TIMER_QUEUE } from "@studyflow/queue";
import type { WorkerConfig } from "./config";

/** Where the queue dashboard lives on the worker's health/admin port. */
export const DASHBOARD_PATH = "/admin/queues";

export interface DashboardCredentials {
  user: string;
  password: string;
}

/**
 * The dashboard's basic-auth credentials, or undefined when it stays off: without both a user
 * and a password it is not mounted at all, rather than served open. Says which, once.
 */
export function dashboardCredentials(
  config: Pick<WorkerConfig, "DASHBOARD_USER" | "DASHBOARD_PASSWORD">,
  logger: Logger,
): DashboardCredentials | undefined {
  const user = config.DASHBOARD_USER;
  const password = config.DASHBOARD_PASSWORD;
  if (user && password) return { user, password };
  if (user || password) {
    logger.warn("queue dashboard is off: set both DASHBOARD_USER and DASHBOARD_PASSWORD to enable it");
  } else {
    logger.info("queue dashboard is off: DASHBOARD_USER and DASHBOARD_PASSWORD are not set");
  }
  return undefined;
}

/** What each queue holds, shown under its name on the dashboard. */
export const QUEUE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  [TASKS_QUEUE]:
    "bulk tasks: a job per task and a task-chunk job per key-range chunk; researchers' runs are named run-actions, study timer ticks timer-tick, exports by their kind",
  [MAINTENANCE_QUEUE]: "housekeeping schedules: stale tasks, expired temporary participants",
  [OUTBOX_QUEUE]: "e-mail delivery rounds of the outbox",
  [TIMER_QUEUE]: "study timer scans: each records the ticks that fell due and queues them as timer-tick jobs",
};

/**
 * The dashboard's own app, its routes under DASHBOARD_PATH. bull-board is loaded here, not with
 * the worker: its modules took about 0.2 s of the worker's start on a 2-core machine, for a page an
 * operator opens now and then (docs/benchmarks.md, "Start-up").
 */
async function loadBoard(queues: Queue[]): Promise<Hono> {
  const [{ createBullBoard }, { BullMQAdapter }, { HonoAdapter }, { serveStatic }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/hono"),
    import("@hono/node-server/serve-static"),
  ]);
  const board = new HonoAdapter(serveStatic);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { description: QUEUE_DESCRIPTIONS[queue.name] ?? "" })),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: "studyflow queues" } },
  });
  // The UI builds its asset and API URLs from the base path, so it must match the mount point.
  board.setBasePath(DASHBOARD_PATH);
  const app = new Hono();
  app.route(DASHBOARD_PATH, board.registerPlugin());
  app.notFound((c) => c.json({ error: "not found" }, 404));
  return app;
}

/**
 * Mounts the queue dashboard for `queues` at DASHBOARD_PATH, every page and API call behind basic
 * auth. The board is built at the first request that passes the guard.
 */
export function mountDashboard(app: Hono, queues: Queue[], credentials: DashboardCredentials): void {
  const guard = basicAuth({
    username: credentials.user,
    password: credentials.password,
    realm: "studyflow queue dashboard",
  });
  let board: Promise<Hono> | undefined;
  const serve = (c: Context) => {
    // a load that failed is tried again by the next request
    board ??= loadBoard(queues).catch((error: unknown) => {
      board = undefined;
      throw error;
    });
    return board.then((loaded) => loaded.fetch(c.req.raw, c.env));
  };
  app.use(DASHBOARD_PATH, guard);
  app.use(`${DASHBOARD_PATH}/*`, guard);
  app.all(DASHBOARD_PATH, serve);
  app.all(`${DASHBOARD_PATH}/*`, serve);
}
