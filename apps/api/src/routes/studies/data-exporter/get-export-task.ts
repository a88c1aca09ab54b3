import type { AppDeps } from "../../../deps";
import { caseTaskEnvelope, presentCaseTask } from "@studyflow/presenters/case-task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import type { ExportGroup } from "./export-groups";
import { exportTaskOf, exportTaskParams } from "./export-task-access";

/** GET …/{group}/task/{taskID}: an export task's status and progress, as CASE shows it. */
export function registerGetExportTask(router: ApiRouter, deps: AppDeps, group: ExportGroup) {
  defineRoute(
    router,
    {
      method: "get",
      path: `/${group.path}/task/{taskID}`,
      tags: ["data-exporter"],
      summary: `Status and progress of a ${group.noun} export task (CASE)`,
      description:
        "`{task}` in CASE's Task shape: `in_progress` until the task ends, then `completed` (a failed or canceled " +
        "task is `completed` with `error`, as CASE reports failures; the precise status is in `studyflowStatus`). " +
        `Only the task's creator or an admin may see it. Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: { params: exportTaskParams },
      responses: {
        200: jsonContent(caseTaskEnvelope, "the task"),
        ...errorResponses([400, 401, 403, 404], {
          403: `missing \`${group.permission}\`, or the task is someone else's`,
          404: `no ${group.noun} export task with this id in this study`,
        }),
      },
    },
    async (c) => {
      const task = await exportTaskOf(c, deps.database.db, group, c.req.valid("param"));
      return c.json({ task: presentCaseTask(task) }, 200);
    },
  );
}
