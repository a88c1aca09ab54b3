import { z } from "@hono/zod-openapi";
import { Invalid } from "@studyflow/domain/errors";
import { findVirtualParticipants } from "@studyflow/domain/participants";
import { participantOf } from "../../../app-env";
import { addressKeys } from "../../../client-address";
import type { AppDeps } from "../../../deps";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import { participantSchema, presentParticipant } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

const linkingCodeQuery = z.object({
  key: z.string().max(200, "key is longer than 200 characters").optional().openapi({ example: "panel" }),
  value: z.string().max(200, "value is longer than 200 characters").optional().openapi({ example: "PANEL-123" }),
});

/** The look-up tells whether a linking code is held: asking again and again is trying codes. */
function lookupLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "virtual-participant-lookup",
    limit: 60,
    windowSeconds: 15 * 60,
    count: "every-request",
    message: "too many virtual participant look-ups; try again later",
    keys: (c) => [`user:${participantOf(c).userId}`, ...addressKeys(c, "ip:")],
  });
}

export function registerFindVirtualParticipants(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      middleware: [lookupLimit(limiter)],
      method: "get",
      path: "/{studyKey}",
      tags: ["study-events"],
      summary: "The study's virtual participants holding a linking code",
      description:
        "For a participant app to check a virtual participant before claiming it (`merge-virtual-participant`): " +
        "those of status `virtual` whose linking code `key` is `value`, at most 100, as case-backend answers them. " +
        "Both are required (400). Limited per user and address (60 look-ups in 15 minutes).",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, query: linkingCodeQuery },
      responses: {
        200: jsonContent(z.object({ participants: z.array(participantSchema) }), "the matching virtual participants"),
        ...errorResponses([400, 401, 404, 429], {
          400: "key or value missing",
          404: "study not found",
          429: "too many look-ups",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { key, value } = c.req.valid("query");
      if (!key || !value) throw new Invalid("missing required fields");
      const found = await findVirtualParticipants(db, studyKey, key, value);
      return c.json({ participants: found.map(presentParticipant) }, 200);
    },
  );
}
