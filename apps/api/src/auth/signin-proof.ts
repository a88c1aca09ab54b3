import { createHash, timingSafeEqual } from "node:crypto";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import type { ApiConfig } from "../config";
import { verifiedClientCertificate } from "./signin-mtls-server";

/** The header a caller of POST /v1/auth/signin-with-idp proves itself with (MANAGEMENT_IDP_SIGNIN_SECRET). */
export const SIGNIN_SECRET_HEADER = "X-Signin-Secret";

/** Longest header value looked at; the secret itself is far shorter. */
const MAX_SECRET_LENGTH = 1_000;

/** Compares in constant time whatever the lengths: both sides hashed first. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected)) && given.length === expected.length;
}

/** The settings that decide how a sign-in caller proves itself. */
export type SignInProofSettings = Pick<ApiConfig, "MANAGEMENT_IDP_SIGNIN_SECRET" | "MANAGEMENT_IDP_SIGNIN_MTLS_PORT">;

/**
 * Why a sign-in request does not prove its caller, or null when it does. case-backend trusts
 * signin-with-idp's body as it comes (it relies on network isolation); studyflow accepts it only
 * from a caller that proves itself: one that sends MANAGEMENT_IDP_SIGNIN_SECRET in X-Signin-Secret,
 * or one that came over the mTLS listener (MANAGEMENT_IDP_SIGNIN_MTLS_PORT) with a client
 * certificate TLS verified (`verifiedCertificate`; never true on the main listener). With neither
 * configured, that sign-in is off: every caller is refused.
 */
export function signInProofProblem(
  config: SignInProofSettings,
  header: string | undefined,
  verifiedCertificate = false,
): string | null {
  if (verifiedCertificate && config.MANAGEMENT_IDP_SIGNIN_MTLS_PORT !== undefined) return null;
  const expected = config.MANAGEMENT_IDP_SIGNIN_SECRET;
  if (expected === undefined) {
    return config.MANAGEMENT_IDP_SIGNIN_MTLS_PORT === undefined
      ? "sign-in with an identity provider is not enabled on this server"
      : "sign-in with an identity provider is accepted only over mutual TLS on its own port";
  }
  if (header === undefined || header === "") return `${SIGNIN_SECRET_HEADER} header required`;
  if (header.length > MAX_SECRET_LENGTH || !sameSecret(header, expected)) return `${SIGNIN_SECRET_HEADER} not accepted`;
  return null;
}

/**
 * Route middleware of signin-with-idp: 401 `{"error": …}` for a caller that does not prove itself,
 * before its body is read. Answers rather than throws, so a failure limit placed before it counts
 * the 401.
 */
export function requireSignInProof(config: SignInProofSettings) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const problem = signInProofProblem(config, c.req.header(SIGNIN_SECRET_HEADER), verifiedClientCertificate(c));
    if (problem !== null) return c.json({ error: problem }, 401);
    await next();
  });
}
