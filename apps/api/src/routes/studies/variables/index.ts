import type { AppDeps } from "../../../deps";
import { registerCreateVariable } from "./create-variable";
import { registerDeleteVariable } from "./delete-variable";
import { registerDescribeVariable } from "./describe-variable";
import { registerGetVariable } from "./get-variable";
import { registerListVariables } from "./list-variables";
import { registerSetVariableValue } from "./set-variable-value";
import { createRouter } from "../../create-router";

/**
 * A study's variables as case-backend serves them (case-admin's study configurator); mounted
 * below the studies router, whose auth covers it. The CLI sets values through the domain.
 */
export function createVariablesRouter(deps: AppDeps) {
  const router = createRouter();
  registerListVariables(router, deps);
  registerCreateVariable(router, deps);
  registerGetVariable(router, deps);
  registerDescribeVariable(router, deps);
  registerSetVariableValue(router, deps);
  registerDeleteVariable(router, deps);
  return router;
}
