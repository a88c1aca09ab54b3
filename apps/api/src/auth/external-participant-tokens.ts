import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { Unauthorized } from "@studyflow/domain/errors";
import { userForExternalIdentity } from "@studyflow/domain/external-identity";
import type { ApiConfig } from "../config";
import type { AppDeps } from "../deps";
import { VerifiedTokens } from "./verified-tokens";

/**
 * Participant tokens issued by an external OpenID provider (deployments that keep accounts
 * elsewhere): verified against the provider's JWKS with pinned algorithms, issuer and audience,
 * and mapped to a studyflow user on first use.
 */
export interface ExternalParticipantVerifier {
  /** Whether this token (by its header and issuer) is one this verifier handles. */
  handles(token: string): boolean;
  /** Verifies the token and returns the studyflow user it maps to (created on first use). */
  verify(token: string): Promise<{ userId: string }>;
}

/** Clock skew tolerated between the provider and this server, as for studyflow's own tokens. */
const CLOCK_TOLERANCE_SECONDS = 30;

/** A subject longer than this is no provider's account id (OpenID Connect caps `sub` at 255 ASCII). */
const MAX_SUBJECT_LENGTH = 255;

/**
 * The JWKS of the issuer's discovery document, looked up on first use (not at start, so that the
 * API starts while the provider is down); a failed lookup is tried again by the next request.
 */
function discoveredJwks(issuer: string, fetchTimeoutMs: number): JWTVerifyGetKey {
  let jwks: Promise<JWTVerifyGetKey> | undefined;
  const discover = async (): Promise<JWTVerifyGetKey> => {
    const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(fetchTimeoutMs), redirect: "error" });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    const document = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was fetched for
    if (document.issuer !== issuer) throw new Error(`${url} names issuer ${String(document.issuer)}`);
    if (typeof document.jwks_uri !== "string") throw new Error(`${url} has no jwks_uri`);
    return createRemoteJWKSet(new URL(document.jwks_uri), { timeoutDuration: fetchTimeoutMs });
  };
  return async (header, token) => {
    jwks ??= discover().catch((error: unknown) => {
      jwks = undefined;
      throw error;
    });
    return (await jwks)(header, token);
  };
}

function algorithmOf(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).alg;
  } catch {
    return undefined;
  }
}

function unauthorizedFor(error: unknown): Unauthorized {
  if (error instanceof Unauthorized) return error;
  const code = (error as { code?: string }).code;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return new Unauthorized("token expired");
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return new Unauthorized("token algorithm not accepted");
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const claim = (error as { claim?: string }).claim;
      return new Unauthorized(claim === "iss" || claim === "aud" ? `token ${claim} not accepted` : "invalid token");
    }
    default:
      return new Unauthorized("invalid token");
  }
}

/** Null when no external provider is configured. */
export function createExternalParticipantVerifier(
  config: ApiConfig,
  deps: Pick<AppDeps, "database" | "clock">,
): ExternalParticipantVerifier | null {
  const issuer = config.PARTICIPANT_OIDC_ISSUER;
  const audience = config.PARTICIPANT_OIDC_AUDIENCE;
  if (issuer === undefined || audience === undefined) return null;
  const algorithms = [...config.PARTICIPANT_OIDC_ALGORITHMS];
  // jose's own default (5 s) for one JWKS or discovery fetch; the JWKS is cached and refetched
  // only for an unknown key id, at most every 30 s (jose's cooldown).
  const fetchTimeoutMs = 5_000;
  const jwks = config.PARTICIPANT_OIDC_JWKS_URL
    ? createRemoteJWKSet(new URL(config.PARTICIPANT_OIDC_JWKS_URL), { timeoutDuration: fetchTimeoutMs })
    : discoveredJwks(issuer, fetchTimeoutMs);
  const { clock } = deps;
  const verified = new VerifiedTokens(CLOCK_TOLERANCE_SECONDS);

  const verifyToken = async (token: string): Promise<JWTPayload> => {
    const known = verified.get(token, Math.floor(clock() / 1000));
    if (known) return known;
    try {
      const { payload } = await jwtVerify(token, jwks, {
        algorithms,
        issuer,
        audience,
        requiredClaims: ["sub", "exp"],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(clock()),
      });
      verified.remember(token, payload);
      return payload;
    } catch (error) {
      throw unauthorizedFor(error);
    }
  };

  return {
    // studyflow's own participant tokens are HS256; everything else (RS256, ES256, but also `none`
    // or an algorithm not pinned) is the provider's to vouch for, and refused by verify().
    handles: (token) => {
      const alg = algorithmOf(token);
      return alg !== undefined && alg !== "HS256";
    },
    verify: async (token) => {
      const payload = await verifyToken(token);
      const subject = payload.sub;
      if (typeof subject !== "string" || subject === "" || subject.length > MAX_SUBJECT_LENGTH) {
        throw new Unauthorized("token has no usable subject");
      }
      const email = typeof payload.email === "string" && payload.email_verified === true ? payload.email : undefined;
      const { userId } = await userForExternalIdentity(
        deps.database.db,
        { issuer, subject, ...(email === undefined ? {} : { verifiedEmail: email }) },
        new Date(clock()),
      );
      return { userId };
    },
  };
}
