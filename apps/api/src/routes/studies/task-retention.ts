import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  TASK_RETENTION_DEFAULTS,
  assertStudyPermission,
  assertStudyVisible,
  getStudyTaskRetention,
  updateStudyTaskRetention,
  type TaskRetentionDefaults,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { presentStudyTaskRetention, studyTaskRetentionEnvelope } from "@studyflow/presenters/task";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../schemas";

const PATH = "/{studyKey}/task-retention";
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

const getRoute = createRoute({
  method: "get",
  path: PATH,
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
});

const putRoute = createRoute({
  method: "put",
  path: PATH,
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
});

/** A study's retention of finished tasks (studyflow's own route; case-backend keeps tasks in its job store). */
export function registerTaskRetention(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const defaults: TaskRetentionDefaults = {
    days: deps.config.TASK_RETENTION_DAYS,
    timerDays: deps.config.TIMER_TASK_RETENTION_DAYS,
  };
  router.openapi(getRoute, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyVisible(db, managementOf(c), studyKey);
    const state = await getStudyTaskRetention(db, studyKey, defaults);
    return c.json({ taskRetention: presentStudyTaskRetention(state) }, 200);
  });
  router.openapi(putRoute, async (c) => {
    const { studyKey } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(db, who, studyKey, "update-study-props");
    const clock = deps.clock ?? Date.now;
    const state = await updateStudyTaskRetention(
      db,
      studyKey,
      c.req.valid("json"),
      who.subject,
      defaults,
      new Date(clock()),
    );
    return c.json({ taskRetention: presentStudyTaskRetention(state) }, 200);
  });
}
