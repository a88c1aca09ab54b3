import { createHash } from "node:crypto";
import type { JWTPayload } from "jose";
import * as oidc from "openid-client";
import { Invalid, Unavailable } from "@studyflow/domain/errors";
import { signInManagementUser } from "@studyflow/domain/management-users";
import type { ApiRouter } from "../../routes/create-router";
import { defineRoute } from "../../routes/define-route";
import { claimAt, claimHolds } from "../../middleware/auth";
import { ATTEMPT_TTL_SECONDS, takeAttempt } from "./attempt-cookie";
import type { ConsoleSignIn } from "./sign-in";
import { describeGrantFailure } from "./provider";

/** A claim as text of at most `max` characters ("" when absent or not text), as the user row keeps it. */
const textClaim = (claims: JWTPayload, name: string, max: number): string => {
  const value = claims[name];
  return typeof value === "string" ? value.slice(0, max) : "";
};

/**
 * GET /console/oidc/callback: the provider's redirect back. In this order, each failure a 400
 * naming it, with nothing written and no session: the browser's attempt (cookie present, opens,
 * at most ten minutes old; removed either way), the provider's own error, the state, the attempt
 * not used before (a replayed callback), then the code redeemed with the PKCE verifier and the ID
 * token checked by openid-client (signature, issuer, audience, expiry, nonce). Then, in one
 * transaction, the management user of (issuer, sub) is created or updated and a console session
 * opened holding the provider's refresh token sealed; the session cookie is set and the browser
 * sent back to the console.
 */
export function registerCallback(router: ApiRouter, { deps, provider, sessions, box, now }: ConsoleSignIn) {
  const usedStateKey = (state: string) =>
    `${deps.config.QUEUE_PREFIX}:console-oidc:used-state:${createHash("sha256").update(state).digest("hex")}`;

  defineRoute(
    router,
    { method: "get", path: "/callback", hide: true, responses: { 303: { description: "back to the console" } } },
    async (c) => {
      c.header("Cache-Control", "no-store");
      const started = now();
      const attempt = takeAttempt(c, box, Math.floor(started.getTime() / 1000));
      const error = c.req.query("error");
      if (error !== undefined) {
        const description = c.req.query("error_description");
        throw new Invalid(
          `the provider refused the sign-in: ${error.slice(0, 100)}${description ? ` (${description.slice(0, 200)})` : ""}`,
        );
      }
      const state = c.req.query("state");
      if (state === undefined || state === "") throw new Invalid("the provider's answer has no state");
      if (state !== attempt.state) throw new Invalid("state does not match this browser's sign-in attempt");
      if (!c.req.query("code")) throw new Invalid("the provider's answer has no code");
      // An attempt is redeemed once, also when its cookie was copied: the code is the provider's to
      // refuse a second time too, but this refuses before anything is sent there.
      let first: string | null;
      try {
        first = await deps.redis.set(usedStateKey(state), "1", "EX", ATTEMPT_TTL_SECONDS, "NX");
      } catch (cause) {
        throw new Unavailable("the sign-in cannot be checked now (Redis is unavailable); try again shortly", { cause });
      }
      if (first === null) throw new Invalid("this sign-in attempt was used already: start again from the console");

      const configuration = await provider.configuration();
      // The address the provider redirected to, as the browser reached it (the proxy in front may
      // have rewritten the host): the configured redirect URI with this request's parameters.
      const currentUrl = new URL(provider.redirectUri);
      currentUrl.search = new URL(c.req.url).search;
      let claims: JWTPayload;
      let refreshToken: string | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(configuration, currentUrl, {
          pkceCodeVerifier: attempt.codeVerifier,
          expectedState: attempt.state,
          expectedNonce: attempt.nonce,
          idTokenExpected: true,
        });
        const idToken = tokens.claims();
        if (!idToken) throw new Invalid("the provider sent no ID token");
        claims = { ...idToken };
        // Profile claims many providers leave out of the ID token: from userinfo, for the same subject.
        if (configuration.serverMetadata().userinfo_endpoint && tokens.access_token) {
          const userinfo = await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub);
          claims = { ...userinfo, ...idToken };
        }
        refreshToken = tokens.refresh_token;
      } catch (failure) {
        throw describeGrantFailure(failure);
      }
      const sub = claims.sub;
      if (typeof sub !== "string" || sub === "" || sub.length > 255) {
        throw new Invalid("the provider's subject (sub) is missing or longer than 255 characters");
      }
      const isAdmin =
        provider.admin !== null && claimHolds(claimAt(claims, provider.admin.claim), provider.admin.value);
      const email = textClaim(claims, "email", 320);
      const username =
        textClaim(claims, "name", 200) || textClaim(claims, "preferred_username", 200) || email || sub.slice(0, 200);

      const signedIn = now();
      const { session } = await signInManagementUser(deps.database.db, box, {
        profile: {
          provider: provider.issuer,
          sub,
          email,
          username,
          imageUrl: textClaim(claims, "picture", 2_000),
          isAdmin,
        },
        kind: "console",
        renewToken: refreshToken ?? null,
        ttlSeconds: deps.config.MANAGEMENT_SESSION_TTL_SECONDS,
        maxAgeSeconds: deps.config.MANAGEMENT_SESSION_MAX_AGE_SECONDS,
        now: signedIn,
      });
      sessions.set(c, session.id, session.expiresAt, signedIn);
      return c.redirect(`/console${attempt.returnTo}`, 303);
    },
  );
}
