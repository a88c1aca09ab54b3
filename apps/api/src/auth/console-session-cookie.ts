import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { SecretBox, SecretUnreadable, parseSecretKey } from "@studyflow/domain/access";
import { Forbidden, Unauthorized } from "@studyflow/domain/errors";
import type { AppEnv } from "../app-env";
import { consoleOidcEnabled, type ApiConfig } from "../config";

/**
 * The console's session cookie after an OpenID Connect sign-in. `__Host-`: only this host sets it,
 * Secure, for every path (the console calls /v1/… with it). Its value is the session's id sealed
 * with MANAGEMENT_SECRETS_KEY: it names a management session and nothing else (never a provider
 * token), and cannot be made up from a session id.
 */
export const CONSOLE_SESSION_COOKIE = "__Host-studyflow_console";

/** Every request authenticated by the cookie carries the session's CSRF token in this header. */
export const CSRF_HEADER = "X-CSRF-Token";

const SEAL_CONTEXT = "console-session-cookie";

export interface ConsoleSessions {
  /** The console's origin (CONSOLE_OIDC_REDIRECT_URI's): the only one whose requests the cookie authenticates. */
  origin: string;
  /** Sets the cookie naming `sessionId`, ending when the session does. */
  set(c: Context<AppEnv>, sessionId: string, expiresAt: Date, now: Date): void;
  /** Removes the cookie from the browser. */
  clear(c: Context<AppEnv>): void;
  /**
   * The session the request's cookie names: undefined without the cookie; 401 for a cookie that
   * does not open (altered, or sealed under a key no longer configured); 403 for a request
   * another origin sent.
   */
  sessionOf(c: Context<AppEnv>): string | undefined;
  /** The session's CSRF token: what GET /console/oidc/session tells the console. */
  csrfToken(sessionId: string): string;
  /** 403 unless the request carries the session's CSRF token. */
  checkCsrf(c: Context<AppEnv>, sessionId: string): void;
}

/**
 * The console's sessions by cookie, or null when the console signs in with no provider (then a
 * cookie of that name authenticates nothing).
 */
export function consoleSessions(config: ApiConfig): ConsoleSessions | null {
  const key = config.MANAGEMENT_SECRETS_KEY;
  const redirect = config.CONSOLE_OIDC_REDIRECT_URI;
  // loadConfig requires both with the provider; a config built otherwise gets no console sessions.
  if (!consoleOidcEnabled(config) || key === undefined || redirect === undefined) return null;
  const box = SecretBox.fromBase64(key, config.MANAGEMENT_SECRETS_PREVIOUS_KEYS);
  // A key of its own for the CSRF tokens, derived from the sealing key (never the same key for two purposes).
  const csrfKey = Buffer.from(hkdfSync("sha256", parseSecretKey(key), Buffer.alloc(0), "studyflow console csrf", 32));
  const origin = new URL(redirect).origin;
  const csrfToken = (sessionId: string) => createHmac("sha256", csrfKey).update(sessionId).digest("base64url");

  const checkOrigin = (c: Context<AppEnv>) => {
    // Browsers send Origin on every cross-origin request and every non-GET one; a request another
    // site's page makes is refused whatever it carries (SameSite=Strict already keeps the cookie
    // off most of them).
    const sent = c.req.header("origin");
    if (sent !== undefined && sent !== origin) {
      throw new Forbidden(
        `the console's session cookie is accepted from ${origin} only, not from ${sent.slice(0, 200)}`,
      );
    }
    if (c.req.header("sec-fetch-site") === "cross-site") {
      throw new Forbidden("the console's session cookie is not accepted on a request another site started");
    }
  };

  return {
    origin,
    set(c, sessionId, expiresAt, now) {
      setCookie(c, CONSOLE_SESSION_COOKIE, box.seal(sessionId, SEAL_CONTEXT).toString("base64url"), {
        path: "/",
        secure: true,
        httpOnly: true,
        sameSite: "Strict",
        expires: expiresAt,
        maxAge: Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000)),
      });
    },
    clear(c) {
      deleteCookie(c, CONSOLE_SESSION_COOKIE, { path: "/", secure: true, httpOnly: true, sameSite: "Strict" });
    },
    sessionOf(c) {
      const value = getCookie(c, CONSOLE_SESSION_COOKIE);
      if (value === undefined) return undefined;
      checkOrigin(c);
      try {
        return box.open(Buffer.from(value, "base64url"), SEAL_CONTEXT);
      } catch (error) {
        if (error instanceof SecretUnreadable)
          throw new Unauthorized("the console's session cookie is not valid: sign in again");
        throw error;
      }
    },
    csrfToken,
    checkCsrf(c, sessionId) {
      const sent = c.req.header(CSRF_HEADER);
      if (sent === undefined || sent === "") {
        throw new Forbidden(`a request signed in by the console's cookie must carry the ${CSRF_HEADER} header`);
      }
      const expected = Buffer.from(csrfToken(sessionId));
      const given = Buffer.from(sent);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new Forbidden(`${CSRF_HEADER} does not match the console's session`);
      }
    },
  };
}
