import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { validationHook } from "../../validation";
import { registerSubmitResponse } from "./submit-response";
import { registerUpdateParticipant } from "./update-participant";

/** A study's participants, as researchers act on them. */
export function createParticipantsRouter(deps: AppDeps) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(managementAuth(deps));
  registerSubmitResponse(router, deps);
  registerUpdateParticipant(router, deps);
  return router;
}
