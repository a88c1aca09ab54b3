import { z } from "@hono/zod-openapi";
import { type SecretBox } from "@studyflow/domain/access";
import { Forbidden, Unauthorized } from "@studyflow/domain/errors";
import { recordAudit } from "@studyflow/domain/foundation";
import {
  extendableManagementSession,
  findManagementUser,
  rotateManagementSession,
} from "@studyflow/domain/management-users";
import { managementOf } from "../../app-env";
import { caseAdminProvider } from "../../auth/idp-refresh";
import type { AppDeps } from "../../deps";
import { managementAuth } from "../../middleware/auth";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import {
  answerForSession,
  nowOf,
  secretBoxOf,
  sessionAnswerSchema,
  sessionOfRequest,
  type SessionAnswer,
} from "./management-session-answer";

const extendBody = z.object({
  renewToken: z
    .string()
    .max(16_384, "is longer than 16384 characters")
    .nullish()
    .transform((value) => value ?? "")
    .openapi({ description: "the provider's new refresh token; empty keeps the one the session holds" }),
});

/**
 * Rotates the caller's case-admin session (checked open and young enough before the provider is
 * asked), keeping the provider's new refresh token, and answers a token for it.
 */
async function extendSession(
  deps: AppDeps,
  provider: ReturnType<typeof caseAdminProvider>,
  input: { subject: string; sessionId: string; renewToken: string; sealer: SecretBox; now: Date },
): Promise<SessionAnswer> {
  const { sessionId, renewToken, sealer, now } = input;
  const db = deps.database.db;
  const user = await findManagementUser(db, input.subject);
  if (!user) throw new Forbidden("this token's subject is not a management user");
  const limits = {
    sessionId,
    userId: user.id,
    maxAgeSeconds: deps.config.MANAGEMENT_SESSION_MAX_AGE_SECONDS,
    now,
  };
  // Checked before the provider is asked: an ended or too old session extends nothing.
  const session = await extendableManagementSession(db, limits);
  if (session.kind !== "case-admin") throw new Forbidden("only case-admin's sessions are extended here");
  let kept = renewToken === "" ? null : renewToken;
  if (kept !== null && provider) {
    const refreshed = await provider.refresh(kept);
    // another person's token of the same client would otherwise prolong this session
    if (refreshed.subject !== user.sub) {
      throw new Unauthorized("the renew token is another person's: sign in again");
    }
    kept = refreshed.refreshToken;
  }
  const extended = await db.transaction(async (tx) => {
    const rotated = await rotateManagementSession(tx, sealer, {
      ...limits,
      renewToken: kept,
      ttlSeconds: deps.config.MANAGEMENT_SESSION_TTL_SECONDS,
    });
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: user.id,
        action: "session.extend",
        target: rotated.id,
        details: { renewTokenReplaced: kept !== null, refreshedAtProvider: kept !== null && provider !== null },
      },
      now,
    );
    return rotated;
  });
  const answer = await answerForSession(deps, {
    userId: user.id,
    sessionId: extended.id,
    sessionEndsAt: extended.expiresAt,
    isAdmin: user.isAdmin,
    now,
  });
  return answer;
}

export function registerExtendSession(router: ApiRouter, deps: AppDeps) {
  const box = secretBoxOf(deps.config);
  const provider = caseAdminProvider(deps.config);
  defineRoute(
    router,
    {
      method: "post",
      path: "/extend-session",
      tags: ["management sign-in"],
      summary: "Extend a management session with the provider's new refresh token (case-admin)",
      description:
        "A new token for the caller's session (the `sid` of its token). case-backend opens a new session each time " +
        "and stores `renewToken` unchecked; studyflow rotates the caller's session instead. With MANAGEMENT_IDP_ISSUER " +
        "(case-admin's provider) configured, a `renewToken` is first refreshed there as case-admin's client and must " +
        "be the session's own person's: the provider's refusal, or another person's token, is 401 and nothing changes; " +
        "the refresh token the provider answers is kept. Without a provider the session's own token is the only " +
        "proof. Either way the session's end moves MANAGEMENT_SESSION_TTL_SECONDS ahead, never past " +
        "MANAGEMENT_SESSION_MAX_AGE_SECONDS from its sign-in; past that age the answer is 401 (sign in again). " +
        "An empty `renewToken` leaves the session's end as it is. `isAdmin` is read from the user's row. Tokens of " +
        "no sign-in session (the CLI's, an external provider's) and API keys: 403.",
      security: MANAGEMENT_SECURITY,
      middleware: [managementAuth(deps)],
      bothSlashes: true,
      caseBody: extendBody,
      responses: {
        200: jsonContent(sessionAnswerSchema, "the session's new token"),
        ...errorResponses([400, 401, 403, 404, 503], {
          401: "the session has ended or reached its maximum age, or the provider refused the renew token",
          403: "the credential belongs to no sign-in session",
          404: "the token's session has ended",
          503: "the provider could not be reached (nothing changed), or MANAGEMENT_SECRETS_KEY is not configured",
        }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      const sessionId = sessionOfRequest(c.req.header("authorization"));
      const { renewToken } = c.req.valid("json");
      const sealer = box();
      const now = nowOf(deps);
      const answer = await extendSession(deps, provider, { subject: who.subject, sessionId, renewToken, sealer, now });
      return c.json(answer, 200);
    },
  );
}
