import { assertStudyPermission } from "@studyflow/domain/access";
import { getStudyTimer } from "@studyflow/domain/timer";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentStudyTimer, studyTimerEnvelope } from "@studyflow/presenters/task";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerGetTimer(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["study-timer"],
      summary: "A study's timer: its schedule, whether it is paused, its last and next tick",
      description:
        "Active studies whose current rules handle TIMER get a tick every interval: the TIMER event over every " +
        "participant except temporary and deleted ones, as a Task of kind `timer` (see the run-actions task routes). " +
        "`intervalSeconds` null means the default, TIMER_INTERVAL_SECONDS (`defaultIntervalSeconds`), which the API " +
        "reads as the workers do: `effectiveIntervalSeconds` and `nextTickAt` are what the workers schedule. " +
        "Requires `manage-timer`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(studyTimerEnvelope, "the study's timer"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-timer");
      const state = await getStudyTimer(db, studyKey, {
        now: clock(),
        defaultIntervalSeconds: deps.config.TIMER_INTERVAL_SECONDS,
      });
      return c.json({ timer: presentStudyTimer(state) }, 200);
    },
  );
}
