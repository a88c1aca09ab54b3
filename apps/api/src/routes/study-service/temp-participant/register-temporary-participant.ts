import { z } from "@hono/zod-openapi";
import { registerTemporaryParticipant } from "@studyflow/domain/events";
import { checkInstanceId } from "../../../case-compat";
import { addressKeys } from "../../../client-address";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import { participantSchema, presentParticipant } from "@studyflow/presenters/participant";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, keyString } from "../../schemas";
import { instanceIdField } from "./temporary-participant-fields";

const registerRequest = z.object({ studyKey: keyString("studyKey"), instanceId: instanceIdField });

/** Public and cheap to call, so bounded per address. */
function registrationLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "temp-register",
    limit: 30,
    windowSeconds: 10 * 60,
    count: "every-request",
    message: "too many registrations from this address; try again later",
    input: { json: registerRequest },
    keys: (c) => addressKeys(c, "ip:"),
  });
}

export function registerTemporaryParticipantRegistration(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  // the body reader first: it makes a text/plain body JSON, which the limit then reads
  defineRoute(
    router,
    {
      caseBody: registerRequest,
      bodyDescription: "`studyKey`, and the `instanceId` (or `instanceID`) of this server",
      afterBody: [registrationLimit(limiter)],
      method: "post",
      path: "/register",
      tags: ["study-events"],
      summary: "Register an anonymous temporary participant (public, CASE)",
      description:
        "Creates a participant with status `temporary` and runs the ENTER rules. The returned `participantId` is the " +
        "only proof of ownership: keep it secret; it can be merged into a profile within the configured age limit, " +
        "and opens and submits surveys for temporary participants until then. Answers 200 as case-backend does.",
      responses: {
        200: jsonContent(z.object({ participant: participantSchema, ...warningsField }), "the temporary participant"),
        ...errorResponses([400, 404, 409, 422, 429], {
          400: "invalid body, or an instanceId of another instance",
          404: "study not found",
          409: "study not active",
          429: "too many registrations from this address",
        }),
      },
    },
    async (c) => {
      const request = c.req.valid("json");
      checkInstanceId(deps.config, request.instanceId);
      const result = await registerTemporaryParticipant(
        deps.database.db,
        { studyKey: request.studyKey },
        domainContext(deps),
      );
      return c.json(
        { participant: presentParticipant(result.participant), warnings: presentWarnings(result.warnings) },
        200,
      );
    },
  );
}
