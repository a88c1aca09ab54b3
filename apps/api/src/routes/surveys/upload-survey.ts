import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { MAX_SURVEY_DEFINITION_BYTES, assertStudyPermission, publishSurveyVersion } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { domainContext } from "../../domain-context";
import { presentSurveyVersionInfo, surveyVersionInfoSchema } from "../../presenters/survey";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, keyString, studyKeyParam } from "../schemas";

/** The uploaded CASE Survey: only its key is read, the rest is kept as it is. */
const surveyUpload = z
  .looseObject(
    {
      surveyDefinition: z.looseObject(
        { key: keyString("surveyDefinition.key").openapi({ example: "intake" }) },
        { error: "surveyDefinition must be an object: the survey's root item group, with its key" },
      ),
    },
    { error: "the survey must be a JSON object: a CASE Survey as case-editor-tools write it" },
  )
  .openapi("CaseSurveyUpload", {
    description:
      "A CASE Survey as case-editor-tools write it. Opaque apart from surveyDefinition.key; id, versionId, " +
      `published and unpublished are set by the server. At most ${MAX_SURVEY_DEFINITION_BYTES} bytes serialized.`,
  });

const route = createRoute({
  method: "post",
  path: "/",
  tags: ["surveys"],
  summary: "Upload a survey definition as the survey's new, published version",
  description:
    "Every upload is a new version of the survey named by `surveyDefinition.key`, with a version id (YY-MM-N) " +
    "and publication time from the server; it becomes the version participants get, also after the survey was " +
    "unpublished. Audited as `survey.publish`. Requires `manage-surveys`.",
  security: MANAGEMENT_SECURITY,
  request: { params: studyKeyParam, body: jsonBody(surveyUpload) },
  responses: {
    201: jsonContent(z.object({ version: surveyVersionInfoSchema }), "the stored version"),
    ...errorResponses([400, 401, 403, 404, 413], {
      400: "not a CASE Survey: no surveyDefinition, or a missing or malformed key",
      404: "study not found",
      413: "the definition is larger than 1 MiB serialized (or the body larger than 2 MiB)",
    }),
  },
});

export function registerUploadSurvey(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(db, who, studyKey, "manage-surveys");
    const version = await publishSurveyVersion(
      db,
      { studyKey, actor: who.subject, survey: c.req.valid("json") },
      domainContext(deps),
    );
    return c.json({ version: presentSurveyVersionInfo(version) }, 201);
  });
}
