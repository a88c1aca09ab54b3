import * as oidc from "openid-client";
import type { ApiRouter } from "../../routes/create-router";
import { defineRoute } from "../../routes/define-route";
import { saveAttempt } from "./attempt-cookie";
import type { ConsoleSignIn } from "./sign-in";

/** A console page to come back to: a fragment such as `#/studies/flu/run`, nothing else (no other address). */
const RETURN_FRAGMENT = /^#\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]{0,500}$/;

/**
 * GET /console/oidc/login[?return=#/…]: a new attempt (state, nonce and PKCE verifier, fresh each
 * time) kept sealed in the browser, and a redirect to the provider's authorization endpoint with
 * the code challenge (S256).
 */
export function registerLogin(router: ApiRouter, { provider, box, now }: ConsoleSignIn) {
  defineRoute(
    router,
    { method: "get", path: "/login", hide: true, responses: { 302: { description: "to the provider" } } },
    async (c) => {
      const configuration = await provider.configuration();
      const requested = c.req.query("return") ?? "";
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      saveAttempt(c, box, {
        state,
        nonce,
        codeVerifier,
        returnTo: RETURN_FRAGMENT.test(requested) ? requested : "",
        startedAt: Math.floor(now().getTime() / 1000),
      });
      const url = oidc.buildAuthorizationUrl(configuration, {
        redirect_uri: provider.redirectUri,
        scope: provider.scope,
        response_type: "code",
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: "S256",
        state,
        nonce,
      });
      c.header("Cache-Control", "no-store");
      return c.redirect(url.href, 302);
    },
  );
}
