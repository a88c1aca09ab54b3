import type { AppDeps } from "../../../deps";
import { presentTask, taskEnvelope } from "@studyflow/presenters/task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { TASK_PATH, taskParams, visibleTaskOf } from "./visible-task";

export function registerGetTask(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: TASK_PATH,
      tags: ["run-actions"],
      summary: "Status and progress of a bulk task: a run-actions task or a timer tick",
      description:
        "The task's creator or an admin may see a run-actions task; anyone with `run-study-action` on the study sees " +
        "its timer ticks (created by `study-timer`). Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      responses: {
        200: jsonContent(taskEnvelope, "the task"),
        ...errorResponses([401, 403, 404], { 404: "no such task in this study" }),
      },
    },
    async (c) => {
      const { task } = await visibleTaskOf(c, deps.database.db, c.req.valid("param"));
      return c.json({ task: presentTask(task) }, 200);
    },
  );
}
