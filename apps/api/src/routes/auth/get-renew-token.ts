import { z } from "@hono/zod-openapi";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import { renewTokenOfSession } from "@studyflow/domain/management-users";
import { nowOf, secretBoxOf } from "./management-session-answer";

const sessionParam = z.object({
  sessionID: z
    .string()
    .min(1, "must not be empty")
    .max(100, "is longer than 100 characters")
    .openapi({ param: { name: "sessionID", in: "path" }, example: "0b7c9a52-6f3e-4d8e-9b1a-2f4c5d6e7f80" }),
});

const renewTokenSchema = z
  .object({
    renewToken: z.string().openapi({ description: 'the provider\'s refresh token; "" when the session holds none' }),
  })
  .openapi("ManagementRenewToken");

export function registerGetRenewToken(router: ApiRouter, deps: AppDeps) {
  const box = secretBoxOf(deps.config);
  defineRoute(
    router,
    {
      method: "get",
      path: "/renew-token/{sessionID}",
      tags: ["management sign-in"],
      summary: "The provider's refresh token a session holds (case-admin)",
      description:
        "case-admin reads it to renew its provider sign-in, then calls extend-session with the provider's new one. " +
        "Only the session's own user: another user's session is 403, an unknown or ended one 404 (case-backend: 500).",
      security: MANAGEMENT_SECURITY,
      middleware: [managementAuth(deps)],
      bothSlashes: true,
      request: { params: sessionParam },
      responses: {
        200: jsonContent(renewTokenSchema, "the refresh token"),
        ...errorResponses([400, 401, 403, 404, 409, 503], {
          403: "the session is another user's",
          404: "no open session of this id",
          409: "the refresh token was sealed under a key no longer configured: sign in again",
        }),
      },
    },
    async (c) => {
      const { sessionID } = c.req.valid("param");
      const renewToken = await renewTokenOfSession(deps.database.db, box(), {
        sessionId: sessionID,
        userId: managementOf(c).subject,
        now: nowOf(deps),
      });
      return c.json({ renewToken }, 200);
    },
  );
}
