import type { AppDeps } from "../../../deps";
import { managementAuth } from "../../../middleware/auth";
import { createRouter } from "../../create-router";
import { registerExportStudyConfig } from "./export-study-config";

/** A study's configuration, current rules and surveys as one file (CASE's export-config). */
export function createExportConfigRouter(deps: AppDeps) {
  const router = createRouter(managementAuth(deps));
  registerExportStudyConfig(router, deps);
  return router;
}
