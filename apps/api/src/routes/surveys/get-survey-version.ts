import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, getSurveyVersion } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { presentSurveyVersion, surveyVersionSchema } from "../../presenters/survey";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam, surveyKeyField } from "../schemas";

const route = createRoute({
  method: "get",
  path: "/{surveyKey}/versions/{versionId}",
  tags: ["surveys"],
  summary: "One version of a survey, with its definition",
  description: "Unpublished versions too. Requires `manage-surveys`.",
  security: MANAGEMENT_SECURITY,
  request: {
    params: studyKeyParam.extend({
      surveyKey: surveyKeyField,
      versionId: z
        .string()
        .min(1, "versionId must not be empty")
        .max(200, "versionId is longer than 200 characters")
        .openapi({ param: { name: "versionId", in: "path" }, example: "26-06-1" }),
    }),
  },
  responses: {
    200: jsonContent(z.object({ version: surveyVersionSchema }), "the version and its CASE Survey"),
    ...errorResponses([400, 401, 403, 404], { 404: "study, survey or version not found" }),
  },
});

export function registerGetSurveyVersion(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey, surveyKey, versionId } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "manage-surveys");
    const version = await getSurveyVersion(db, studyKey, surveyKey, versionId);
    return c.json({ version: presentSurveyVersion(version) }, 200);
  });
}
