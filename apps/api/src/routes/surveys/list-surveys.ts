import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, listSurveys } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { presentSurveySummary, surveySummarySchema } from "../../presenters/survey";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";

const route = createRoute({
  method: "get",
  path: "/",
  tags: ["surveys"],
  summary: "The study's surveys, by key, with their current version",
  description: "An unpublished survey has no current version until its next upload. Requires `manage-surveys`.",
  security: MANAGEMENT_SECURITY,
  request: { params: studyKeyParam },
  responses: {
    200: jsonContent(z.object({ surveys: z.array(surveySummarySchema) }), "the surveys"),
    ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
  },
});

export function registerListSurveys(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "manage-surveys");
    const surveys = await listSurveys(db, studyKey);
    return c.json({ surveys: surveys.map(presentSurveySummary) }, 200);
  });
}
