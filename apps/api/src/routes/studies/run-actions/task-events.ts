import { z } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { TERMINAL_STATUSES, getVisibleTask } from "@studyflow/domain/tasks";
import type { AppDeps } from "../../../deps";
import { presentTask } from "@studyflow/presenters/task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { TASK_PATH, taskParams, visibleTaskOf } from "./visible-task";

/**
 * How often the stream looks at the task. Workers commit progress every batch (tens of ms), so
 * a quarter second is "live" to a person while costing one indexed read per watcher.
 */
const POLL_INTERVAL_MS = 250;
/** Streams end after this long even if the task is still running; clients reconnect. */
const MAX_STREAM_MS = 30 * 60_000;

export function registerTaskEvents(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: `${TASK_PATH}/events`,
      tags: ["run-actions"],
      summary: "Server-Sent Events: the task on every change until it ends",
      description: "Each `task` event carries `{task}`. The stream closes after the task reaches a final status.",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      responses: {
        200: { description: "event stream", content: { "text/event-stream": { schema: z.string() } } },
        ...errorResponses([401, 403, 404], { 404: "no such task in this study" }),
      },
    },
    async (c) => {
      const { studyKey, taskID } = c.req.valid("param");
      // Checked before the stream starts, so a missing or foreign task is a proper 404/403.
      const { who } = await visibleTaskOf(c, db, { studyKey, taskID });
      return streamSSE(c, async (stream) => {
        let aborted = false;
        stream.onAbort(() => {
          aborted = true;
        });
        // The stream's lifetime is real time on this connection, not the app's clock: a test that
        // stops the app's clock must still see its stream end after MAX_STREAM_MS.
        const started = Date.now();
        let last = "";
        let id = 0;
        while (!aborted && Date.now() - started < MAX_STREAM_MS) {
          const task = presentTask(await getVisibleTask(db, studyKey, taskID, who));
          const snapshot = JSON.stringify({ task });
          if (snapshot !== last) {
            last = snapshot;
            await stream.writeSSE({ event: "task", data: snapshot, id: String(id++) });
          }
          if (TERMINAL_STATUSES.includes(task.status)) break;
          await stream.sleep(POLL_INTERVAL_MS);
        }
      });
    },
  );
}
