import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { Conflict, openTaskFile, type FileStore } from "@studyflow/domain";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { sendFile } from "../download";
import type { ExportGroup } from "./export-groups";
import { exportTaskOf, exportTaskParams } from "./export-task-access";

/** GET …/{group}/task/{taskID}/result: the export file, streamed as an attachment. */
export function registerGetExportTaskResult(
  router: OpenAPIHono<AppEnv>,
  deps: AppDeps,
  group: ExportGroup,
  fileStore: FileStore,
) {
  const route = createRoute({
    method: "get",
    path: `/${group.path}/task/{taskID}/result`,
    tags: ["data-exporter"],
    summary: `Download the file of a completed ${group.noun} export (CASE)`,
    description:
      "The file streamed as an attachment (`Content-Disposition: attachment; filename=<name>`) with the task's " +
      "`fileType` as Content-Type and its size as Content-Length. A file stored gzip (`gzip=true` on the " +
      "export) is sent with `Content-Encoding: gzip` to clients that accept it, decompressed for those that do " +
      `not. 409 while the task runs or when it failed; 404 once retention removed the file. Requires \`${group.permission}\`.`,
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
        404: `no ${group.noun} export task with this id in this study, or its file was removed (retention)`,
        409: "the task has not completed, failed or was canceled",
      }),
    },
  });
  router.openapi(route, async (c) => {
    const db = deps.database.db;
    const task = await exportTaskOf(c, db, group, c.req.valid("param"));
    if (task.status === "queued" || task.status === "in_progress") {
      throw new Conflict(`task is not completed (status "${task.status}"); follow it at …/task/${task.id}`);
    }
    if (task.status !== "completed") {
      throw new Conflict(`task ${task.status}${task.error ? `: ${task.error}` : ""}; it has no file`);
    }
    return sendFile(c, await openTaskFile(db, fileStore, task));
  });
}
