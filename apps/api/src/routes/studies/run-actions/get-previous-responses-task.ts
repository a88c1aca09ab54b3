import type { AppDeps } from "../../../deps";
import { caseTaskEnvelope, presentCaseTask } from "@studyflow/presenters/case-task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { taskParams } from "./visible-task";
import { previousResponsesTaskOf } from "./previous-responses-task-access";

export function registerGetPreviousResponsesTask(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/previous-responses/task/{taskID}",
      tags: ["run-actions"],
      summary: "Status of a previous-responses task (CASE)",
      description:
        "The task in CASE's shape (`completed` once it ended; a failure or cancel shows `error`). Its creator or " +
        "an admin may see it. Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      responses: {
        200: jsonContent(caseTaskEnvelope, "the task"),
        ...errorResponses([401, 403, 404], { 404: "no previous-responses task with this id in this study" }),
      },
    },
    async (c) => c.json({ task: presentCaseTask(await previousResponsesTaskOf(c, deps, c.req.valid("param"))) }, 200),
  );
}
