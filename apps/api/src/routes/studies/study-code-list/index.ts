import type { AppDeps } from "../../../deps";
import { registerAddCodes } from "./add-codes";
import { registerListCodes } from "./list-codes";
import { registerListCodeListKeys } from "./list-code-list-keys";
import { registerRemoveCodes } from "./remove-codes";
import { createRouter } from "../../create-router";

/**
 * A study's code lists as case-backend serves them (case-admin's study configurator): list keys,
 * pages of codes, adding and removing. studyflow's own /code-lists routes serve the same lists.
 * Mounted below the studies router, whose auth covers it.
 */
export function createStudyCodeListRouter(deps: AppDeps) {
  const router = createRouter();
  registerListCodeListKeys(router, deps);
  registerListCodes(router, deps);
  registerAddCodes(router, deps);
  registerRemoveCodes(router, deps);
  return router;
}
