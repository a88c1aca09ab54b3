import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { RateLimiter } from "../../../rate-limit";

/** Participant files under /{studyKey}/files (scaffold: filled by the files work). */
export function registerParticipantFiles(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  void router;
  void deps;
  void limiter;
}
