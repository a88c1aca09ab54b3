import type { AppDeps } from "../../../deps";
import { registerDeleteSurveyVersion } from "./delete-survey-version";
import { registerGetCurrentSurvey } from "./get-current-survey";
import { registerGetSurveyVersion } from "./get-survey-version";
import { registerListSurveyVersions } from "./list-survey-versions";
import { registerListSurveys } from "./list-surveys";
import { registerUnpublishSurvey } from "./unpublish-survey";
import { registerUploadSurvey } from "./upload-survey";
import { registerUploadSurveyVersion } from "./upload-survey-version";
import { createRouter } from "../../create-router";

/**
 * Survey definitions of a study, managed by researchers, at case-backend's paths and in its shapes
 * (case-admin's survey pages): create, upload a version, list, fetch, unpublish, delete a version.
 */
export function createSurveysRouter(deps: AppDeps) {
  // mounted in the studies router, whose management auth covers it
  const router = createRouter();
  registerUploadSurvey(router, deps);
  registerListSurveys(router, deps);
  registerListSurveyVersions(router, deps);
  registerGetSurveyVersion(router, deps);
  registerGetCurrentSurvey(router, deps);
  registerUnpublishSurvey(router, deps);
  registerUploadSurveyVersion(router, deps);
  registerDeleteSurveyVersion(router, deps);
  return router;
}
