import type { AppDeps } from "../../deps";
import { registerLiveness } from "./liveness";
import { registerReadiness } from "./readiness";
import { createRouter } from "../create-router";

/** Probes for the orchestrator: public, outside /v1. */
export function createHealthRouter(deps: AppDeps) {
  const router = createRouter();
  registerLiveness(router);
  registerReadiness(router, deps);
  return router;
}
