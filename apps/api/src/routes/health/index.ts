import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { validationHook } from "../../validation";
import { registerLiveness } from "./liveness";
import { registerReadiness } from "./readiness";

/** Probes for the orchestrator: public, outside /v1. */
export function createHealthRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerLiveness(router);
  registerReadiness(router, deps);
  return router;
}
