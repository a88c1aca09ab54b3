import { createSecretKey } from "node:crypto";
import { z } from "@hono/zod-openapi";
import { compactVerify } from "jose";
import { PARTICIPANT_TOKEN_TYPE, SESSION_ID_CLAIM, TOKEN_ISSUER } from "@studyflow/domain/access";
import { Unauthorized } from "@studyflow/domain/errors";
import { renewSessionTokens } from "@studyflow/domain/participant-sessions";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { tokenEnvelope, tokenEnvelopeSchema } from "./token-envelope";
import { perAddress } from "./participant-limits";
import { sessionTokenSettings } from "./participant-session-settings";

const renewRequest = z
  .object({ refreshToken: z.string().min(1, "required").max(200, "longer than 200 characters") })
  .openapi("CaseRenewRequest");

/** Renewals per client address: an app renews about once per access-token lifetime per tab. */
const RENEWALS_PER_ADDRESS = 120;

export function registerRenewSessionTokens(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const { clock } = deps;
  const key = createSecretKey(Buffer.from(deps.config.PARTICIPANT_JWT_SECRET, "utf8"));
  const limit = perAddress(limiter, "auth:renew", RENEWALS_PER_ADDRESS, 60 * 60, "too many renewals; try again later");

  /** Signature, issuer and kind, but not expiry: renewing is what an expired token is for. */
  const claimsOf = async (header: string | undefined) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    if (!match?.[1]) throw new Unauthorized("Authorization header must be 'Bearer <access token>'");
    let claims: Record<string, unknown>;
    try {
      const { payload } = await compactVerify(match[1], key, { algorithms: ["HS256"] });
      claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    } catch {
      throw new Unauthorized("invalid token");
    }
    const sessionId = claims[SESSION_ID_CLAIM];
    if (claims.iss !== TOKEN_ISSUER || claims.typ !== PARTICIPANT_TOKEN_TYPE || typeof claims.sub !== "string") {
      throw new Unauthorized("invalid token");
    }
    if (typeof sessionId !== "string") throw new Unauthorized("this token belongs to no session: sign in");
    return { userId: claims.sub, sessionId };
  };

  defineRoute(
    router,
    {
      method: "post",
      path: "/token/renew",
      tags: ["participant auth"],
      summary: "Renew the token pair",
      description:
        "case-backend's refreshToken: Bearer = the last access token, expired or not (HS256 with the participant key, " +
        "pinned), body = its session's refresh token. The refresh token is spent and a new pair issued (rotation on " +
        "every use). A spent token has one successor: presented again less than PARTICIPANT_REFRESH_GRACE_SECONDS " +
        "ago (two tabs renewing at once, a retry after a lost answer) it answers the same refresh token again, with a " +
        "new access token, while that successor is unspent; presented later, or after its successor renewed, it is a " +
        "reuse: the whole session is revoked and the answer is 401. Sessions end " +
        "PARTICIPANT_SESSION_MAX_AGE_SECONDS after sign-in however often they renew. Locked accounts and accounts " +
        "being deleted cannot renew.",
      security: PARTICIPANT_SECURITY,
      middleware: [limit],
      caseBody: renewRequest,
      bodyDescription: "The refresh token of the last sign-in or renewal",
      responses: {
        200: jsonContent(tokenEnvelopeSchema, "renewed"),
        ...errorResponses([400, 401, 429], {
          401: "missing or invalid access token; unknown, expired or reused refresh token; ended session",
          429: "too many renewals from this address",
        }),
      },
    },
    async (c) => {
      const { userId, sessionId } = await claimsOf(c.req.header("authorization"));
      const tokens = await renewSessionTokens(db, {
        userId,
        sessionId,
        refreshToken: c.req.valid("json").refreshToken,
        now: new Date(clock()),
        settings: sessionTokenSettings(deps.config),
      });
      return c.json(await tokenEnvelope(db, tokens), 200);
    },
  );
}
