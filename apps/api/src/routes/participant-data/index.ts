import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";
import { registerParticipantFiles } from "./files";
import { registerSurveyWithContext } from "./survey-with-context";

/** case-backend's participant-data routes under /v1/study-service/participant-data; all need a participant token. */
export function createParticipantDataRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.use(participantAuth(deps));
  registerSurveyWithContext(router, deps);
  registerParticipantFiles(router, deps, limiter);
  return router;
}
