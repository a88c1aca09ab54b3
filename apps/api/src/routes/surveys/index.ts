import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { validationHook } from "../../validation";
import { registerGetSurveyVersion } from "./get-survey-version";
import { registerListSurveyVersions } from "./list-survey-versions";
import { registerListSurveys } from "./list-surveys";
import { registerUnpublishSurvey } from "./unpublish-survey";
import { registerUploadSurvey } from "./upload-survey";

/** Survey definitions of a study, managed by researchers: upload, list, fetch, unpublish. */
export function createSurveysRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(managementAuth(deps));
  registerUploadSurvey(router, deps);
  registerListSurveys(router, deps);
  registerListSurveyVersions(router, deps);
  registerGetSurveyVersion(router, deps);
  registerUnpublishSurvey(router, deps);
  return router;
}
