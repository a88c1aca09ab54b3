import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { Forbidden, recordAudit } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import { findManagementUser, rotateManagementSession } from "@studyflow/domain";
import { answerForSession, nowOf, secretBoxOf, sessionAnswerSchema, sessionOfRequest } from "./session-answer";

const extendBody = z.object({
  renewToken: z
    .string()
    .max(16_384, "is longer than 16384 characters")
    .nullish()
    .transform((value) => value ?? "")
    .openapi({ description: "the provider's new refresh token; empty keeps the one the session holds" }),
});

export function registerExtendSession(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const box = secretBoxOf(deps.config);
  caseRoute(
    router,
    {
      method: "post",
      path: "/extend-session",
      tags: ["management sign-in"],
      summary: "Extend a management session with the provider's new refresh token (case-admin)",
      description:
        "A new token for the caller's session (the `sid` of its token). case-backend opens a new session each time; " +
        "studyflow rotates instead: the session's sealed refresh token is replaced and its end moved " +
        "MANAGEMENT_SESSION_TTL_SECONDS ahead (an empty `renewToken` leaves the session as it is). `isAdmin` is read " +
        "from the user's row. Tokens of no sign-in session (the CLI's, an external provider's) and API keys: 403.",
      security: MANAGEMENT_SECURITY,
      middleware: [managementAuth(deps)],
      body: extendBody,
      responses: {
        200: jsonContent(sessionAnswerSchema, "the session's new token"),
        ...errorResponses([400, 401, 403, 404, 503], {
          403: "the credential belongs to no sign-in session",
          404: "the token's session has ended",
        }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const sessionId = sessionOfRequest(c.req.header("authorization"));
      const { renewToken } = c.req.valid("json");
      const sealer = box();
      const now = nowOf(deps);
      const { user, session } = await deps.database.db.transaction(async (tx) => {
        const user = await findManagementUser(tx, who.subject);
        if (!user) throw new Forbidden("this token's subject is not a management user");
        const session = await rotateManagementSession(tx, sealer, {
          sessionId,
          userId: user.id,
          renewToken: renewToken === "" ? null : renewToken,
          ttlSeconds: deps.config.MANAGEMENT_SESSION_TTL_SECONDS,
          now,
        });
        await recordAudit(
          tx,
          {
            studyKey: null,
            actor: user.id,
            action: "session.extend",
            target: session.id,
            details: { renewTokenReplaced: renewToken !== "" },
          },
          now,
        );
        return { user, session };
      });
      const answer = await answerForSession(deps, {
        userId: user.id,
        sessionId: session.id,
        sessionEndsAt: session.expiresAt,
        isAdmin: user.isAdmin,
        now,
      });
      return c.json(answer, 200);
    },
  );
}
