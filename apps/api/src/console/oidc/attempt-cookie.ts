import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { SecretUnreadable, type SecretBox } from "@studyflow/domain/access";
import { Invalid } from "@studyflow/domain/errors";
import type { AppEnv } from "../../app-env";

/**
 * A sign-in attempt in progress, between the redirect to the provider and its redirect back: the
 * checks of the callback (state, nonce, PKCE verifier) and where the console goes afterwards. It
 * lives in the browser that started it, sealed (AES-256-GCM, MANAGEMENT_SECRETS_KEY), so nothing
 * is stored for an attempt nobody finishes. SameSite=Lax: the provider's redirect back is a
 * top-level GET from another site, which Strict would send without it. Path /console: no other
 * route ever sees it.
 */
export const ATTEMPT_COOKIE = "__Secure-studyflow_console_oidc";
const ATTEMPT_PATH = "/console";
const SEAL_CONTEXT = "console-oidc-attempt";

/** Ten minutes to sign in at the provider (its login, consent, perhaps a second factor). */
export const ATTEMPT_TTL_SECONDS = 600;

const attemptSchema = z.object({
  state: z.string().min(1),
  nonce: z.string().min(1),
  codeVerifier: z.string().min(43),
  /** A console fragment (`#/studies/…`) or "". */
  returnTo: z.string(),
  /** Unix seconds: the cookie's expiry is the browser's promise, this is checked here. */
  startedAt: z.number().int(),
});
export type SignInAttempt = z.infer<typeof attemptSchema>;

export function saveAttempt(c: Context<AppEnv>, box: SecretBox, attempt: SignInAttempt): void {
  setCookie(c, ATTEMPT_COOKIE, box.seal(JSON.stringify(attempt), SEAL_CONTEXT).toString("base64url"), {
    path: ATTEMPT_PATH,
    secure: true,
    httpOnly: true,
    sameSite: "Lax",
    maxAge: ATTEMPT_TTL_SECONDS,
  });
}

/**
 * The browser's attempt, removed from it whatever comes next (an attempt is used once): 400 when
 * there is none, it does not open, or it is older than ten minutes.
 */
export function takeAttempt(c: Context<AppEnv>, box: SecretBox, nowSeconds: number): SignInAttempt {
  const value = getCookie(c, ATTEMPT_COOKIE);
  deleteCookie(c, ATTEMPT_COOKIE, { path: ATTEMPT_PATH, secure: true, httpOnly: true, sameSite: "Lax" });
  if (value === undefined) {
    throw new Invalid(
      "no sign-in attempt in this browser (its cookie is missing or has expired, or it was used already): " +
        "start again from the console",
    );
  }
  let attempt: SignInAttempt;
  try {
    attempt = attemptSchema.parse(JSON.parse(box.open(Buffer.from(value, "base64url"), SEAL_CONTEXT)));
  } catch (error) {
    if (error instanceof SecretUnreadable || error instanceof SyntaxError || error instanceof z.ZodError) {
      throw new Invalid("the sign-in attempt's cookie is not valid: start again from the console");
    }
    throw error;
  }
  if (nowSeconds - attempt.startedAt > ATTEMPT_TTL_SECONDS || attempt.startedAt > nowSeconds + 60) {
    throw new Invalid("the sign-in attempt has expired (ten minutes): start again from the console");
  }
  return attempt;
}
