import { cancelTask } from "@studyflow/domain/tasks";
import type { AppDeps } from "../../../deps";
import { presentTask, taskEnvelope } from "@studyflow/presenters/task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { TASK_PATH, taskParams, visibleTaskOf } from "./visible-task";

export function registerCancelTask(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: `${TASK_PATH}/cancel`,
      tags: ["run-actions"],
      summary: "Cancel a queued or running task; batches already written stay",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      responses: {
        200: jsonContent(taskEnvelope, "the canceled task"),
        ...errorResponses([401, 403, 404, 409], {
          404: "no such task in this study",
          409: "the task has already ended",
        }),
      },
    },
    async (c) => {
      const { who, task } = await visibleTaskOf(c, db, c.req.valid("param"));
      return c.json({ task: presentTask(await cancelTask(db, task, who, deps)) }, 200);
    },
  );
}
