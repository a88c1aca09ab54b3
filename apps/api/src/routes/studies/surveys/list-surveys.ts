import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listSurveys } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentSurveySummary, surveySummarySchema } from "@studyflow/presenters/survey";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerListSurveys(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["surveys"],
      summary: "The study's surveys, by key, with their current version",
      description:
        "Every survey with a stored version, unpublished ones too: case-backend's `key`, and studyflow's " +
        "current version beside it (an unpublished survey has none until its next upload). Requires " +
        "`read-study-config` or `manage-surveys`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(
          z.object({ surveys: z.array(surveySummarySchema.extend({ key: z.string() })) }),
          "the surveys",
        ),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-surveys"]);
      const surveys = await listSurveys(db, studyKey);
      return c.json({ surveys: surveys.map((s) => ({ key: s.surveyKey, ...presentSurveySummary(s) })) }, 200);
    },
  );
}
