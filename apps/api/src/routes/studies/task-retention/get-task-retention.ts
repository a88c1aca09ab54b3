import { assertStudyVisible } from "@studyflow/domain/study-config";
import { getStudyTaskRetention } from "@studyflow/domain/tasks";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentStudyTaskRetention, studyTaskRetentionEnvelope } from "@studyflow/presenters/task";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { retentionDefaults } from "./retention-defaults";

/** A study's retention of finished tasks (studyflow's own route; case-backend keeps tasks in its job store). */
export function registerGetTaskRetention(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const defaults = retentionDefaults(deps);
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["studies"],
      summary: "How long the study's finished tasks are kept",
      description:
        "Finished tasks (completed, failed, canceled, skipped) older than their retention are removed with their result " +
        "documents and export file records by an hourly cluster job; queued and running ones never. `days` applies to " +
        "run-actions and export tasks (an export task stays at least until its file expired, EXPORT_RETENTION_DAYS), " +
        "`timerDays` to timer ticks (a study's latest tick always stays). Null: the deployment's default " +
        "(TASK_RETENTION_DAYS, TIMER_TASK_RETENTION_DAYS); 0: forever. Requires any permission for the study.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(studyTaskRetentionEnvelope, "the study's retention"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyVisible(db, managementOf(c), studyKey);
      const state = await getStudyTaskRetention(db, studyKey, defaults);
      return c.json({ taskRetention: presentStudyTaskRetention(state) }, 200);
    },
  );
}
