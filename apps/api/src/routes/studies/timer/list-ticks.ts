import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listTimerTicks } from "@studyflow/domain/timer";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentTimerTick, timerTickSchema } from "@studyflow/presenters/task";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { nextCursorField, pageQuery } from "../page-query";

export function registerListTicks(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/ticks",
      tags: ["study-timer"],
      summary: "A study's timer ticks, newest first, skipped ones included",
      description:
        "Each tick is a Task of kind `timer` (created by `study-timer`); its progress, result document and cancel are " +
        "the run-actions task routes (`run-study-action`). Pages with `limit` and `cursor`. Requires `manage-timer`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, query: pageQuery },
      responses: {
        200: jsonContent(z.object({ ticks: z.array(timerTickSchema), nextCursor: nextCursorField }), "a page of ticks"),
        ...errorResponses([400, 401, 403, 404], { 400: "bad limit or cursor", 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { limit, cursor } = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-timer");
      const page = await listTimerTicks(db, studyKey, { limit, ...(cursor === undefined ? {} : { cursor }) });
      return c.json({ ticks: page.items.map(presentTimerTick), nextCursor: page.nextCursor }, 200);
    },
  );
}
