import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerExportStudyConfig } from "./export-study-config";

/** A study's configuration, current rules and surveys as one file (CASE's export-config). */
export function createExportConfigRouter(deps: AppDeps) {
  // mounted in the studies router, whose management auth covers it
  const router = createRouter();
  registerExportStudyConfig(router, deps);
  return router;
}
