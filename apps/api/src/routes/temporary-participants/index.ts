import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import { validationHook } from "../../validation";
import { registerGetTemporaryParticipantSurvey } from "./get-temporary-participant-survey";
import { registerTemporaryParticipantRegistration } from "./register-temporary-participant";
import { registerSubmitTemporaryParticipantResponse } from "./submit-temporary-participant-response";

/** Anonymous participants (CASE's temp-participant routes): public, so every operation is rate-limited instead of authenticated. */
export function createTemporaryParticipantsRouter(deps: AppDeps, limiter: RateLimiter) {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerTemporaryParticipantRegistration(router, deps, limiter);
  registerGetTemporaryParticipantSurvey(router, deps, limiter);
  registerSubmitTemporaryParticipantResponse(router, deps, limiter);
  return router;
}
