import { createHash, timingSafeEqual } from "node:crypto";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import type { ApiConfig } from "../config";

/** The header a caller of POST /v1/auth/signin-with-idp proves itself with (MANAGEMENT_IDP_SIGNIN_SECRET). */
export const SIGNIN_SECRET_HEADER = "X-Signin-Secret";

/** Longest header value looked at; the secret itself is far shorter. */
const MAX_SECRET_LENGTH = 1_000;

/** Compares in constant time whatever the lengths: both sides hashed first. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected)) && given.length === expected.length;
}

/**
 * Why a sign-in request does not prove its caller, or null when it does. case-backend trusts
 * signin-with-idp's body as it comes (it relies on network isolation); studyflow accepts it only
 * from a caller that sends MANAGEMENT_IDP_SIGNIN_SECRET in X-Signin-Secret. Without the secret
 * configured, that sign-in is off: every caller is refused.
 */
export function signInProofProblem(
  config: Pick<ApiConfig, "MANAGEMENT_IDP_SIGNIN_SECRET">,
  header: string | undefined,
): string | null {
  const expected = config.MANAGEMENT_IDP_SIGNIN_SECRET;
  if (expected === undefined) return "sign-in with an identity provider is not enabled on this server";
  if (header === undefined || header === "") return `${SIGNIN_SECRET_HEADER} header required`;
  if (header.length > MAX_SECRET_LENGTH || !sameSecret(header, expected)) return `${SIGNIN_SECRET_HEADER} not accepted`;
  return null;
}

/**
 * Route middleware of signin-with-idp: 401 `{"error": …}` for a caller that does not prove itself,
 * before its body is read. Answers rather than throws, so a failure limit placed before it counts
 * the 401.
 */
export function requireSignInProof(config: Pick<ApiConfig, "MANAGEMENT_IDP_SIGNIN_SECRET">) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const problem = signInProofProblem(config, c.req.header(SIGNIN_SECRET_HEADER));
    if (problem !== null) return c.json({ error: problem }, 401);
    await next();
  });
}
