import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerGetDailyExportConfig } from "./get-daily-export-config";
import { registerSetDailyExportConfig } from "./set-daily-export-config";

/** Which surveys a study exports every day; mounted below the studies router, whose auth covers it. */
export function createDailyExportConfigRouter(deps: AppDeps) {
  const router = createRouter();
  registerGetDailyExportConfig(router, deps);
  registerSetDailyExportConfig(router, deps);
  return router;
}
