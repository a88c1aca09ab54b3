import type { AppDeps } from "../../../deps";
import { registerIncrementCounter } from "./increment-counter";
import { registerListCounters } from "./list-counters";
import { registerRemoveCounter } from "./remove-counter";
import { registerSaveCounter } from "./save-counter";
import { createRouter } from "../../create-router";

/**
 * A study's counters as case-backend serves them (case-admin's study configurator); rules read
 * and increment the same counters. Mounted below the studies router, whose auth covers it.
 */
export function createStudyCountersRouter(deps: AppDeps) {
  const router = createRouter();
  registerListCounters(router, deps);
  registerSaveCounter(router, deps);
  registerIncrementCounter(router, deps);
  registerRemoveCounter(router, deps);
  return router;
}
