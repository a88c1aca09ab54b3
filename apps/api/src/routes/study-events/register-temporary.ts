import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { RateLimited, registerTemporaryParticipant, type RateLimiter } from "@studyflow/domain";
import { presentParticipant } from "../../presenters/participant";
import type { AppEnv } from "../../app-env";
import { clientAddress } from "../../client-address";
import type { AppDeps } from "../../deps";
import { domainContext } from "../../domain-context";
import { errorResponse, jsonBody, jsonContent, keyString, participantSchema } from "../schemas";

const route = createRoute({
  method: "post",
  path: "/v1/study-service/temp-participant/register",
  tags: ["study-events"],
  summary: "Register an anonymous temporary participant (public)",
  description:
    "Creates a participant with status `temporary` and runs the ENTER rules. The returned `participantId` is the " +
    "only proof of ownership: keep it secret; it can be merged into a profile within the configured age limit.",
  request: { body: jsonBody(z.object({ studyKey: keyString("studyKey") })) },
  responses: {
    201: jsonContent(z.object({ participant: participantSchema }), "the temporary participant"),
    400: errorResponse("invalid body"),
    404: errorResponse("study not found"),
    409: errorResponse("study not active"),
    422: errorResponse("the study's rules failed"),
    429: errorResponse("too many registrations from this address"),
  },
});

/** Public and cheap to call, so bounded per address. */
const REGISTRATIONS = { limit: 30, windowSeconds: 10 * 60 };

export function registerTemporaryParticipantRoute(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  router.openapi(route, async (c) => {
    const decision = await limiter.hit(
      `temp-register:ip:${clientAddress(c)}`,
      REGISTRATIONS.limit,
      REGISTRATIONS.windowSeconds,
    );
    if (!decision.allowed) {
      throw new RateLimited("too many registrations from this address; try again later", decision.retryAfterSeconds);
    }
    const participant = await registerTemporaryParticipant(
      deps.database.db,
      { studyKey: c.req.valid("json").studyKey },
      domainContext(deps),
    );
    return c.json({ participant: presentParticipant(participant) }, 201);
  });
}
