import { createSecretKey, type KeyObject } from "node:crypto";
import { createMiddleware } from "hono/factory";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import {
  currentTokenVersion,
  isTokenRevoked,
  verifyApiKey,
  MANAGEMENT_TOKEN_TYPE,
  PARTICIPANT_TOKEN_TYPE,
  SESSION_ID_CLAIM,
  TOKEN_ISSUER,
} from "@studyflow/domain/access";
import { Invalid, Unauthorized } from "@studyflow/domain/errors";
import { isSessionOpen } from "@studyflow/domain/participant-sessions";
import type { AppEnv } from "../app-env";
import type { ParticipantPrincipal } from "../auth/principals";
import { createExternalParticipantVerifier } from "../auth/external-participant-tokens";
import { API_KEY_HEADER } from "../auth/service-keys";
import { VerifiedTokens } from "../auth/verified-tokens";
import type { AppDeps } from "../deps";
import {
  isManagementSessionOpen,
  managementUserStanding,
  userOfOpenManagementSession,
} from "@studyflow/domain/management-users";
import { consoleSessions } from "../auth/console-session-cookie";

/** Clock skew tolerated between token issuer and this server. */
const CLOCK_TOLERANCE_SECONDS = 30;

/** The HS256 key, made once: jose would otherwise import the secret again on every verification. */
const hmacKeyObject = (secret: string): KeyObject => createSecretKey(Buffer.from(secret, "utf8"));

function bearerToken(header: string | undefined): string {
  if (!header) throw new Unauthorized("missing Authorization header");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new Unauthorized("Authorization header must be 'Bearer <token>'");
  return match[1];
}

function algorithmOf(token: string): string {
  try {
    return decodeProtectedHeader(token).alg ?? "";
  } catch {
    throw new Unauthorized("malformed token");
  }
}

function describeFailure(error: unknown): Unauthorized {
  const code = (error as { code?: string }).code;
  if (code === "ERR_JWT_EXPIRED") return new Unauthorized("token expired");
  if (error instanceof Unauthorized) return error;
  return new Unauthorized("invalid token");
}

/**
 * A claim of a token by name, or by dotted path into nested claims when no claim has the whole
 * name (`realm_access.roles`); a name with dots of its own (`https://example.org/roles`) is found
 * as it is.
 */
export function claimAt(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let value: unknown = payload;
  for (const part of name.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A claim value holds the configured one: equal to it, or among its elements (`groups`, `roles`). */
export function claimHolds(value: unknown, wanted: string): boolean {
  const matches = (item: unknown) =>
    (typeof item === "string" || typeof item === "boolean" || typeof item === "number") && String(item) === wanted;
  return Array.isArray(value) ? value.some(matches) : matches(value);
}

/**
 * Tokens of the identity provider at MANAGEMENT_JWKS_URL: its issuer and audience, pinned
 * algorithms, a subject and an expiry. Admin only through the configured claim and value; the
 * provider's tokens never become admin by an `admin` claim of their own.
 */
function externalManagementTokens(config: AppDeps["config"]) {
  const url = config.MANAGEMENT_JWKS_URL;
  const issuer = config.MANAGEMENT_OIDC_ISSUER;
  const audience = config.MANAGEMENT_OIDC_AUDIENCE;
  // loadConfig refuses a JWKS without issuer and audience; a config built otherwise gets no provider.
  if (url === undefined || issuer === undefined || audience === undefined) return null;
  const algorithms = [...config.MANAGEMENT_OIDC_ALGORITHMS];
  // jose's own default (5 s) for one JWKS fetch; the JWKS is cached and refetched only for an
  // unknown key id, at most every 30 s (jose's cooldown).
  const jwks = createRemoteJWKSet(new URL(url), { timeoutDuration: 5_000 });
  const adminClaim = config.MANAGEMENT_OIDC_ADMIN_CLAIM;
  const adminValue = config.MANAGEMENT_OIDC_ADMIN_VALUE;
  return {
    verify: async (token: string, currentDate: Date | undefined) =>
      (
        await jwtVerify(token, jwks, {
          algorithms,
          issuer,
          audience,
          requiredClaims: ["sub", "exp"],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate,
        })
      ).payload,
    isAdmin: (payload: JWTPayload) =>
      adminClaim !== undefined && adminValue !== undefined && claimHolds(claimAt(payload, adminClaim), adminValue),
  };
}

function describeManagementFailure(error: unknown): Unauthorized {
  const code = (error as { code?: string }).code;
  if (code === "ERR_JOSE_ALG_NOT_ALLOWED") return new Unauthorized("token algorithm not accepted");
  if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED") {
    const claim = (error as { claim?: string }).claim;
    if (claim === "iss" || claim === "aud") return new Unauthorized(`token ${claim} not accepted`);
  }
  return describeFailure(error);
}

/**
 * Management routes: a token, HS256 with our key (pinned) or one of the identity provider's
 * (MANAGEMENT_JWKS_URL, with its issuer, audience and algorithms); or a service account's API key
 * in X-API-Key (see auth/service-keys.ts). Our tokens of a sign-in session (signin-with-idp,
 * extend-session: `sid`) also need the session open and the management user to exist; admin is
 * the user row's flag, not the token's. With neither header, the console's session cookie (after
 * its OpenID Connect sign-in, see console/session-cookie.ts): from the console's origin only, with
 * the session's CSRF token in X-CSRF-Token, while the session is open.
 */
export function managementAuth(deps: AppDeps) {
  const key = hmacKeyObject(deps.config.MANAGEMENT_JWT_SECRET);
  const provider = externalManagementTokens(deps.config);
  const currentDate = () => new Date(deps.clock());
  const verified = new VerifiedTokens(CLOCK_TOLERANCE_SECONDS);
  // The verified payloads that make their bearer an admin, decided once per token; weak, so an
  // entry goes with the cache's.
  const admins = new WeakSet<JWTPayload>();
  // Our own tokens of a sign-in session (`sid`): they hold while the session is open, and their
  // bearer is an admin while the management user's row says so (a provider's token may carry a
  // `sid` of the provider's own: not these).
  const sessionTokens = new WeakSet<JWTPayload>();
  const cookieSessions = consoleSessions(deps.config);

  const verify = async (token: string): Promise<JWTPayload> => {
    const known = verified.get(token, Math.floor(deps.clock() / 1000));
    if (known) return known;
    let payload: JWTPayload;
    try {
      if (algorithmOf(token) === "HS256") {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: ["HS256"],
          issuer: TOKEN_ISSUER,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: currentDate(),
        }));
        if (payload.typ !== MANAGEMENT_TOKEN_TYPE) throw new Unauthorized("not a management token");
        if (payload[SESSION_ID_CLAIM] !== undefined) sessionTokens.add(payload);
        else if (payload.admin === true) admins.add(payload);
      } else if (provider) {
        payload = await provider.verify(token, currentDate());
        if (provider.isAdmin(payload)) admins.add(payload);
      } else {
        throw new Unauthorized("invalid token");
      }
    } catch (error) {
      throw describeManagementFailure(error);
    }
    verified.remember(token, payload);
    return payload;
  };

  return createMiddleware<AppEnv>(async (c, next) => {
    // Management routers nest by path (/v1/studies holds /v1/studies/{studyKey}/run-actions), so a
    // request passes the middleware of each; the token is verified by the first one only.
    if (c.get("management")) return next();
    const apiKey = c.req.header(API_KEY_HEADER);
    const authorization = c.req.header("authorization");
    if (apiKey !== undefined) {
      // Two credentials could name two callers; guessing which one counts would hide a client bug.
      if (authorization !== undefined) {
        throw new Invalid(`send either an Authorization header or an ${API_KEY_HEADER} header, not both`);
      }
      // A service account: its subject's permissions, never admin, whatever the subject is called.
      const { subject, serviceAccountId } = await verifyApiKey(deps.database.db, apiKey.trim(), currentDate());
      // A service account's key acts with the account's own grants; older keys with their subject's.
      c.set("management", {
        subject,
        isAdmin: false,
        ...(serviceAccountId ? { subjectType: "service-account" as const } : {}),
      });
      return next();
    }
    const cookieSession = authorization === undefined ? cookieSessions?.sessionOf(c) : undefined;
    if (cookieSessions && cookieSession !== undefined) {
      cookieSessions.checkCsrf(c, cookieSession);
      const userId = await userOfOpenManagementSession(deps.database.db, cookieSession, currentDate());
      if (userId === undefined) throw new Unauthorized("session ended: sign in again");
      const standing = await managementUserStanding(deps.database.db, userId);
      if (!standing) throw new Unauthorized("management user no longer exists");
      c.set("management", { subject: userId, isAdmin: standing.isAdmin });
      return next();
    }
    const payload = await verify(bearerToken(authorization));
    if (typeof payload.sub !== "string" || payload.sub === "") throw new Unauthorized("token has no subject");
    if (await isTokenRevoked(deps.database.db, payload.sub, payload.iat)) {
      throw new Unauthorized("token revoked: request a new one");
    }
    let isAdmin = admins.has(payload);
    if (sessionTokens.has(payload)) {
      const sessionId = payload[SESSION_ID_CLAIM];
      const now = currentDate();
      if (
        typeof sessionId !== "string" ||
        !(await isManagementSessionOpen(deps.database.db, sessionId, payload.sub, now))
      ) {
        throw new Unauthorized("session ended: sign in again");
      }
      const standing = await managementUserStanding(deps.database.db, payload.sub);
      if (!standing) throw new Unauthorized("management user no longer exists");
      isAdmin = standing.isAdmin;
    }
    c.set("management", { subject: payload.sub, isAdmin });
    await next();
  });
}

/**
 * The check every participant request's token passes: HS256 with the participant key (or an
 * external provider's token, when one is configured), the user's current token version, and, for
 * tokens of a sign-in session (`sid`), that the session is still open (logout, refresh reuse and
 * sign-out-everywhere end it). Both checks read through the read cache: a map lookup per request.
 * Routes that take a participant's access token elsewhere than in the Authorization header
 * (login-with-temptoken's body) call it too, so a token is never trusted on less.
 *
 * With acceptEnded, a genuine, unexpired token whose account, token version or session has ended
 * is answered as `{ userId, ended: true }` instead of 401 (logout: signing out of what has ended is
 * done).
 */
export function participantTokenCheck(deps: AppDeps, options: { acceptEnded?: boolean } = {}) {
  const key = hmacKeyObject(deps.config.PARTICIPANT_JWT_SECRET);
  const ended = (userId: string, message: string): ParticipantPrincipal => {
    if (!options.acceptEnded) throw new Unauthorized(message);
    return { userId, ended: true };
  };
  const verified = new VerifiedTokens(CLOCK_TOLERANCE_SECONDS);
  const external = createExternalParticipantVerifier(deps.config, deps);
  return async (token: string): Promise<ParticipantPrincipal> => {
    // Not HS256: an external OpenID provider's token when one is configured (else refused below).
    if (external?.handles(token)) return { userId: (await external.verify(token)).userId };
    let payload = verified.get(token, Math.floor(deps.clock() / 1000));
    if (!payload) {
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: ["HS256"],
          issuer: TOKEN_ISSUER,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: new Date(deps.clock()),
        }));
      } catch (error) {
        throw describeFailure(error);
      }
      verified.remember(token, payload);
    }
    if (payload.typ !== PARTICIPANT_TOKEN_TYPE) throw new Unauthorized("not a participant token");
    const userId = payload.sub;
    if (typeof userId !== "string" || !/^[0-9a-f-]{36}$/i.test(userId)) throw new Unauthorized("invalid token");
    const tokenVersion = await currentTokenVersion(deps.database.db, userId);
    if (tokenVersion === undefined || payload.tv !== tokenVersion) {
      return ended(userId, tokenVersion === undefined ? "account no longer exists" : "token revoked: sign in again");
    }
    const sessionId = payload[SESSION_ID_CLAIM];
    // operator-minted tokens (CLI token:participant) belong to no session
    if (sessionId === undefined) return { userId };
    if (typeof sessionId !== "string") throw new Unauthorized("invalid token");
    const now = new Date(deps.clock());
    if (!(await isSessionOpen(deps.database.db, sessionId, userId, now)))
      return ended(userId, "signed out: sign in again");
    return { userId, sessionId };
  };
}

/** Participant routes: the Authorization header's token, checked by participantTokenCheck. */
export function participantAuth(deps: AppDeps, options: { acceptEnded?: boolean } = {}) {
  const check = participantTokenCheck(deps, options);
  return createMiddleware<AppEnv>(async (c, next) => {
    // Service keys act for machines on management routes; here one is a mistake, so say so.
    if (c.req.header(API_KEY_HEADER) !== undefined) {
      throw new Unauthorized(`participant routes take a participant token, not an ${API_KEY_HEADER} header`);
    }
    c.set("participant", await check(bearerToken(c.req.header("authorization"))));
    await next();
  });
}
