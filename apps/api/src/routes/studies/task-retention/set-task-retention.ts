import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { TASK_RETENTION_DEFAULTS, updateStudyTaskRetention } from "@studyflow/domain/tasks";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentStudyTaskRetention, studyTaskRetentionEnvelope } from "@studyflow/presenters/task";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../../schemas";
import { retentionDefaults } from "./retention-defaults";

const { maxDays } = TASK_RETENTION_DEFAULTS;

const daysField = (field: string, example: number) => {
  const rule = `${field} must be a whole number of days from 0 (keep forever) to ${maxDays}, or null for the default`;
  return z
    .number({ error: rule })
    .int(rule)
    .min(0, rule)
    .max(maxDays, rule)
    .nullable()
    .optional()
    .openapi({ description: "days; 0 keeps forever; null returns to the default", example });
};

const retentionChange = z
  .strictObject({
    days: daysField("days", 90),
    timerDays: daysField("timerDays", 2),
  })
  .refine((change) => change.days !== undefined || change.timerDays !== undefined, "give days, timerDays or both")
  .openapi("StudyTaskRetentionChange");

/** A study's retention of finished tasks (studyflow's own route; case-backend keeps tasks in its job store). */
export function registerSetTaskRetention(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const defaults = retentionDefaults(deps);
  defineRoute(
    router,
    {
      method: "put",
      path: "/",
      tags: ["studies"],
      summary: "Set how long the study's finished tasks are kept",
      description:
        "An absent field stays as it is; null returns to the default; 0 keeps finished tasks of that kind forever. The " +
        "next hourly round applies it. Every change is recorded in the audit log (`task-retention.update`, from and to). " +
        "Requires `update-study-props`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, body: jsonBody(retentionChange) },
      responses: {
        200: jsonContent(studyTaskRetentionEnvelope, "the study's retention after the change"),
        ...errorResponses([400, 401, 403, 404], {
          400: "an empty change, days out of range, an unknown field",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-props");
      const { clock } = deps;
      const state = await updateStudyTaskRetention(
        db,
        studyKey,
        c.req.valid("json"),
        who.subject,
        defaults,
        new Date(clock()),
      );
      return c.json({ taskRetention: presentStudyTaskRetention(state) }, 200);
    },
  );
}
