import { z } from "@hono/zod-openapi";
import { decodeJwt, decodeProtectedHeader } from "jose";
import type { SecretBox } from "@studyflow/domain/access";
import { MANAGEMENT_TOKEN_TYPE, SESSION_ID_CLAIM, secretBoxOfSettings } from "@studyflow/domain/access";
import { Forbidden, Unavailable } from "@studyflow/domain/errors";
import type { AppDeps } from "../../deps";
import { mintManagementSessionToken } from "@studyflow/domain/management-users";

/** case-backend's answer of signin-with-idp and extend-session (case-admin keeps all four). */
export const sessionAnswerSchema = z
  .object({
    accessToken: z.string().openapi({ description: "a management token (HS256, typ management, sid = the session)" }),
    sessionID: z.string().openapi({ description: "the management session holding the provider's refresh token" }),
    expiresAt: z.number().int().openapi({ description: "when the token ends, Unix seconds" }),
    isAdmin: z.boolean(),
  })
  .openapi("ManagementSession");

export type SessionAnswer = z.infer<typeof sessionAnswerSchema>;

/**
 * The key sealing the provider's refresh tokens. The configuration requires one whenever a
 * sign-in is configured (in development a default), so a missing key means this server signs
 * no one in: 503.
 */
export function secretBoxOf(config: AppDeps["config"]): () => SecretBox {
  const box = secretBoxOfSettings(config);
  return () => {
    if (!box) throw new Unavailable("MANAGEMENT_SECRETS_KEY is not configured: management sessions are off");
    return box;
  };
}

/**
 * A token for a session: it ends MANAGEMENT_TOKEN_TTL_SECONDS from now, or with the session if
 * that comes first (a token never outlives its session).
 */
export async function answerForSession(
  deps: AppDeps,
  input: { userId: string; sessionId: string; sessionEndsAt: Date; isAdmin: boolean; now: Date },
): Promise<SessionAnswer> {
  const nowSeconds = Math.floor(input.now.getTime() / 1000);
  const expiresAt = Math.min(
    nowSeconds + deps.config.MANAGEMENT_TOKEN_TTL_SECONDS,
    Math.floor(input.sessionEndsAt.getTime() / 1000),
  );
  const accessToken = await mintManagementSessionToken({
    userId: input.userId,
    sessionId: input.sessionId,
    isAdmin: input.isAdmin,
    secret: deps.config.MANAGEMENT_JWT_SECRET,
    expiresAt,
    now: input.now,
  });
  return { accessToken, sessionID: input.sessionId, expiresAt, isAdmin: input.isAdmin };
}

/**
 * The session of the request's token (its `sid`), which managementAuth has verified and found
 * open. Tokens of no sign-in session (the CLI's, an external provider's) and API keys have none.
 */
export function sessionOfRequest(authorization: string | undefined): string {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  // HS256 tokens passing managementAuth are this server's own; a provider's `sid` is its own session's
  const own = token !== undefined && decodeProtectedHeader(token).alg === "HS256";
  const claims = own ? decodeJwt(token) : undefined;
  const sessionId = claims?.typ === MANAGEMENT_TOKEN_TYPE ? claims[SESSION_ID_CLAIM] : undefined;
  if (typeof sessionId !== "string" || sessionId === "") {
    throw new Forbidden("this credential belongs to no sign-in session: sign in with the identity provider");
  }
  return sessionId;
}

export const nowOf = (deps: AppDeps) => new Date(deps.clock());
