import type { AppDeps } from "../../../deps";
import { registerDeleteRulesVersion } from "./delete-rules-version";
import { registerGetCaseRulesVersion } from "./get-case-rules-version";
import { registerGetRulesVersion } from "./get-rules-version";
import { registerListCaseRulesVersions } from "./list-case-rules-versions";
import { registerListRulesVersions } from "./list-rules-versions";
import { registerSetRules } from "./set-rules";
import { createRouter } from "../../create-router";

/**
 * A study's rules versions; mounted below the studies router, whose auth covers it. case-backend's
 * `/versions…` routes come before `/{version}`, whose pattern would take "versions" for a version.
 */
export function createRulesRouter(deps: AppDeps) {
  const router = createRouter();
  registerListCaseRulesVersions(router, deps);
  registerGetCaseRulesVersion(router, deps);
  registerDeleteRulesVersion(router, deps);
  registerListRulesVersions(router, deps);
  registerGetRulesVersion(router, deps);
  registerSetRules(router, deps);
  return router;
}
