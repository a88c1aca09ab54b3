import { revokeOwnTokens } from "@studyflow/domain/participant-sessions";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";

export function registerRevokeTokens(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "get",
      path: "/token/revoke",
      tags: ["participant auth"],
      summary: "Revoke every token of the account (CASE)",
      description:
        "case-backend's revokeRefreshTokens: no refresh token of the account renews any more. studyflow ends every " +
        "session of the account and retires every access token already issued, this one included (401 from the " +
        "next request on); case-backend deletes the renew tokens only and leaves access tokens valid until they " +
        "expire. Signing in again opens a new session.",
      security: PARTICIPANT_SECURITY,
      middleware: [participantAuth(deps)],
      responses: {
        200: jsonContent(messageSchema, "every token is revoked"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      await revokeOwnTokens(db, participantOf(c).userId, new Date(clock()));
      return c.json({ message: "tokens revoked" }, 200);
    },
  );
}
