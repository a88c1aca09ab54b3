import { z } from "@hono/zod-openapi";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { readResultDocument, resultDocumentSchema } from "./result-file";
import { taskParams } from "./visible-task";
import { previousResponsesTaskOf } from "./previous-responses-task-access";

export function registerGetPreviousResponsesTaskResult(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/previous-responses/task/{taskID}/result",
      tags: ["run-actions"],
      summary: "Result of a completed previous-responses task (CASE)",
      description:
        "`{result}`: the task's result document (participants processed, errors, duration), as case-backend " +
        "wraps it; case-admin downloads it as a file. 409 until the task completed. Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      responses: {
        200: jsonContent(z.object({ result: resultDocumentSchema }), "the result document"),
        ...errorResponses([401, 403, 404, 409], {
          404: "no previous-responses task with this id in this study, or its file was removed",
          409: "the task has not completed",
        }),
      },
    },
    async (c) => {
      const task = await previousResponsesTaskOf(c, deps, c.req.valid("param"));
      const result = await readResultDocument(deps.config.RESULT_DIR, task);
      c.header("Content-Disposition", `attachment; filename=previous-responses-${task.id}.json`);
      return c.json({ result }, 200);
    },
  );
}
