import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";

/** GET /{studyKey}/survey/{surveyKey}?pid= (scaffold: filled by the survey-context work). */
export function registerSurveyWithContext(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  void router;
  void deps;
}
