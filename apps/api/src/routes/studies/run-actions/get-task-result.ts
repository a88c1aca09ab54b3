import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { readResultDocument, resultDocumentSchema } from "./result-file";
import { TASK_PATH, taskParams, visibleTaskOf } from "./visible-task";

export function registerGetTaskResult(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: `${TASK_PATH}/result`,
      tags: ["run-actions"],
      summary: "Result document of a completed task (run-actions or timer tick)",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      responses: {
        200: jsonContent(resultDocumentSchema, "the result document"),
        ...errorResponses([401, 403, 404, 409], {
          404: "no such task in this study",
          409: "the task has not completed",
        }),
      },
    },
    async (c) => {
      const { task } = await visibleTaskOf(c, deps.database.db, c.req.valid("param"));
      return c.json(await readResultDocument(deps.config.RESULT_DIR, task), 200);
    },
  );
}
