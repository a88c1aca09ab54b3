import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { handleCaseError } from "../../../case-compat";
import { managementAuth } from "../../../middleware/auth";
import { validationHook } from "../../../validation";
import { registerExportConfidentialResponses } from "./export-confidential-responses";
import { registerGetConfidentialExport } from "./get-confidential-export";
import { registerGetSurveyInfo } from "./get-survey-info";
import { registerListConfidentialExports } from "./list-confidential-exports";

/**
 * case-backend's data-exporter group, at its paths and in its shapes, so case-admin's exporter pages
 * work unchanged: survey codebooks, export tasks of responses, participants and reports (counted,
 * started, followed, downloaded), daily exports, confidential responses. Mounted at
 * /v1/studies/{studyKey}/data-exporter.
 */
export function createDataExporterRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(managementAuth(deps));
  router.onError(handleCaseError);
  registerGetSurveyInfo(router, deps);
  registerExportConfidentialResponses(router, deps);
  registerListConfidentialExports(router, deps);
  registerGetConfidentialExport(router, deps);
  return router;
}
