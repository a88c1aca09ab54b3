import { z } from "@hono/zod-openapi";
import { signOutSession } from "@studyflow/domain/participant-sessions";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";

export function registerLogout(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "post",
      path: "/logout",
      tags: ["participant auth"],
      summary: "Sign out of this session",
      description:
        "case-backend's logout: the session's refresh tokens stop renewing, and this access token (every access " +
        "token of the session) is refused from now on, on every API replica. Other sessions stay signed in. A token " +
        "without a session (minted by the operator CLI) has nothing to end: tokensRevoked is 0. A genuine, " +
        "unexpired token of a session or account that has already ended (signed out elsewhere, the account " +
        "deleted) answers 200 with tokensRevoked 0, as case-backend does: there is nothing left to sign out of.",
      security: PARTICIPANT_SECURITY,
      middleware: [participantAuth(deps, { acceptEnded: true })],
      responses: {
        200: jsonContent(z.object({ message: z.string(), tokensRevoked: z.number().int() }), "signed out"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const { sessionId, ended } = participantOf(c);
      if (ended) return c.json({ message: "already signed out", tokensRevoked: 0 }, 200);
      const tokensRevoked = sessionId ? await signOutSession(db, sessionId, new Date(clock())) : 0;
      return c.json({ message: "logout successful", tokensRevoked }, 200);
    },
  );
}
