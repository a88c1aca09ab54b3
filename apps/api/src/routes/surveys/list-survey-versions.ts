import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, listSurveyVersions } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { presentSurveyVersionInfo, surveyVersionInfoSchema } from "../../presenters/survey";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam, surveyKeyField } from "../schemas";

const route = createRoute({
  method: "get",
  path: "/{surveyKey}/versions",
  tags: ["surveys"],
  summary: "Every version of a survey, newest first (metadata only)",
  description: "Requires `manage-surveys`.",
  security: MANAGEMENT_SECURITY,
  request: { params: studyKeyParam.extend({ surveyKey: surveyKeyField }) },
  responses: {
    200: jsonContent(z.object({ versions: z.array(surveyVersionInfoSchema) }), "the versions"),
    ...errorResponses([400, 401, 403, 404], { 404: "study or survey not found" }),
  },
});

export function registerListSurveyVersions(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey, surveyKey } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "manage-surveys");
    const versions = await listSurveyVersions(db, studyKey, surveyKey);
    return c.json({ versions: versions.map(presentSurveyVersionInfo) }, 200);
  });
}
