import { z } from "@hono/zod-openapi";
import { Conflict, NotFound } from "@studyflow/domain/errors";
import { openTaskFile } from "@studyflow/domain/exports";
import { type FileStore } from "@studyflow/domain/files";
import { type TaskRow } from "@studyflow/domain/tasks";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { readResultDocument } from "../run-actions/result-file";
import { attachmentHeader, sendFile } from "../../download";
import type { ExportGroup } from "./export-groups";
import { exportTaskOf, exportTaskParams } from "./export-task-access";

/**
 * A followed run-actions task's result document as case-backend's data exporter serves a study
 * action's file: the JSON as stored, an attachment named `results_<taskID>.json`. 404 until it has
 * one (running, failed, canceled) or once retention removed it.
 */
async function sendRunActionsResult(resultDir: string, task: TaskRow): Promise<Response> {
  if (task.status === "queued" || task.status === "in_progress") {
    throw new NotFound(`task ${task.id} has no result yet (status "${task.status}"); follow it at …/task/${task.id}`);
  }
  if (task.status !== "completed") {
    throw new NotFound(`task ${task.id} ${task.status}${task.error ? `: ${task.error}` : ""}; it has no result`);
  }
  const result = await readResultDocument(resultDir, task);
  return new Response(JSON.stringify(result), {
    status: 200,
    headers: {
      "Content-Type": "application/json",
      "Content-Disposition": attachmentHeader(`results_${task.id}.json`),
      // A study's participants' errors are in it: no cache between us and the researcher keeps it.
      "Cache-Control": "private, no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

/** GET …/{group}/task/{taskID}/result: the export file, streamed as an attachment. */
export function registerGetExportTaskResult(
  router: ApiRouter,
  deps: AppDeps,
  group: ExportGroup,
  fileStore: FileStore,
) {
  defineRoute(
    router,
    {
      method: "get",
      path: `/${group.path}/task/{taskID}/result`,
      tags: ["data-exporter"],
      summary: `Download the file of a completed ${group.noun} export (CASE)`,
      description:
        "The file streamed as an attachment (`Content-Disposition: attachment; filename=<name>`) with the task's " +
        "`fileType` as Content-Type and its size as Content-Length. A file stored gzip (`gzip=true` on the " +
        "export) is sent with `Content-Encoding: gzip` to clients that accept it, decompressed for those that do " +
        `not. 409 while the task runs or when it failed; 404 once retention removed the file. Requires \`${group.permission}\`.` +
        (group.alsoFollows?.["run-actions"]
          ? " A run-actions task followed here (case-admin's action page downloads its result here) answers its result " +
            "document as the JSON attachment `results_<taskID>.json`, 404 while it has none (running, failed, canceled); " +
            "requires `run-study-action`."
          : ""),
      security: MANAGEMENT_SECURITY,
      request: { params: exportTaskParams },
      responses: {
        200: {
          description: "the export file",
          content: {
            "text/csv": { schema: z.string() },
            "application/json": { schema: z.string().openapi({ description: "the JSON export file" }) },
          },
        },
        ...errorResponses([400, 401, 403, 404, 409], {
          404:
            `no ${group.noun} export task with this id in this study, or its file was removed (retention)` +
            (group.alsoFollows?.["run-actions"] ? "; a run-actions task without a result (yet)" : ""),
          409: "the task has not completed, failed or was canceled",
        }),
      },
    },
    async (c) => {
      const db = deps.database.db;
      const task = await exportTaskOf(c, db, group, c.req.valid("param"));
      if (task.kind === "run-actions") return sendRunActionsResult(deps.config.RESULT_DIR, task);
      if (task.status === "queued" || task.status === "in_progress") {
        throw new Conflict(`task is not completed (status "${task.status}"); follow it at …/task/${task.id}`);
      }
      if (task.status !== "completed") {
        throw new Conflict(`task ${task.status}${task.error ? `: ${task.error}` : ""}; it has no file`);
      }
      return sendFile(c, await openTaskFile(db, fileStore, task));
    },
  );
}
