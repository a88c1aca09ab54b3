import { z } from "@hono/zod-openapi";
import { TASK_KINDS } from "@studyflow/db";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listVisibleTasks } from "@studyflow/domain/tasks";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentTaskListItem, taskListItemSchema } from "@studyflow/presenters/task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { nextCursorField, pageQuery } from "../page-query";

export function registerListTasks(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/participants/tasks",
      tags: ["run-actions"],
      summary: "A study's bulk tasks, newest first: run-actions and timer ticks",
      description:
        "The tasks the caller may open with the task routes: an admin sees every task of the study; anyone else " +
        "their own run-actions and exports, and the study's timer ticks. `kind` keeps one kind. Pages with `limit` and `cursor`. " +
        "Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: pageQuery.extend({
          kind: z
            .enum(TASK_KINDS, { error: `kind must be one of ${TASK_KINDS.join(", ")}` })
            .optional()
            .openapi({ description: "only this kind of task" }),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({ tasks: z.array(taskListItemSchema), nextCursor: nextCursorField }),
          "a page of tasks",
        ),
        ...errorResponses([400, 401, 403, 404], { 400: "bad limit, cursor or kind", 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { limit, cursor, kind } = c.req.valid("query");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "run-study-action");
      const page = await listVisibleTasks(db, studyKey, who, {
        limit,
        ...(cursor === undefined ? {} : { cursor }),
        ...(kind === undefined ? {} : { kind }),
      });
      return c.json({ tasks: page.items.map(presentTaskListItem), nextCursor: page.nextCursor }, 200);
    },
  );
}
