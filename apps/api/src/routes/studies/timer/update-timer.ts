import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { MAX_TIMER_INTERVAL_SECONDS, MIN_TIMER_INTERVAL_SECONDS, updateStudyTimer } from "@studyflow/domain/timer";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentStudyTimer, studyTimerEnvelope } from "@studyflow/presenters/task";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../../schemas";

const INTERVAL_RULE = `intervalSeconds must be a whole number from ${MIN_TIMER_INTERVAL_SECONDS} to ${MAX_TIMER_INTERVAL_SECONDS}, or null for the default`;
const OFFSET_RULE = `offsetSeconds must be a whole number from 0 to ${MAX_TIMER_INTERVAL_SECONDS - 1}`;

const timerChange = z
  .strictObject({
    intervalSeconds: z
      .number({ error: INTERVAL_RULE })
      .int(INTERVAL_RULE)
      .min(MIN_TIMER_INTERVAL_SECONDS, INTERVAL_RULE)
      .max(MAX_TIMER_INTERVAL_SECONDS, INTERVAL_RULE)
      .nullable()
      .optional()
      .openapi({
        description: "seconds between ticks; null returns to the default (TIMER_INTERVAL_SECONDS)",
        example: 86_400,
      }),
    offsetSeconds: z
      .number({ error: OFFSET_RULE })
      .int(OFFSET_RULE)
      .min(0, OFFSET_RULE)
      .max(MAX_TIMER_INTERVAL_SECONDS - 1, OFFSET_RULE)
      .optional()
      .openapi({ description: "shift of the slots; less than the study's own interval", example: 7_200 }),
    paused: z.boolean({ error: "paused must be true or false" }).optional(),
  })
  .openapi("StudyTimerChange");

export function registerUpdateTimer(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "put",
      path: "/",
      tags: ["study-timer"],
      summary: "Set a study's timer schedule, or pause and resume it",
      description:
        "Ticks fall due at the start of each slot: `floor((now - offset) / interval) * interval + offset`. An absent " +
        "field stays as it is; `intervalSeconds: null` returns to the default (TIMER_INTERVAL_SECONDS). Paused, the study gets no " +
        "tick from the moment this answers (a running tick goes on; cancel it through its task); resumed, the " +
        "current slot's tick comes at the next scan if it has not run. Every change is recorded in the audit log " +
        "(`timer.schedule.update`, `timer.pause`, `timer.resume`). Requires `manage-timer`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, body: jsonBody(timerChange) },
      responses: {
        200: jsonContent(studyTimerEnvelope, "the study's timer after the change"),
        ...errorResponses([400, 401, 403, 404], {
          400: "an empty change, a value out of range, an offset not below the interval, an unknown field",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-timer");
      const state = await updateStudyTimer(db, studyKey, c.req.valid("json"), who.subject, {
        now: clock(),
        defaultIntervalSeconds: deps.config.TIMER_INTERVAL_SECONDS,
      });
      return c.json({ timer: presentStudyTimer(state) }, 200);
    },
  );
}
