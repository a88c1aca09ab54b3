import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Configuration } from "oidc-provider";
import * as oidc from "openid-client";

/**
 * A real OpenID provider for tests (oidc-provider, a certified implementation) on 127.0.0.1, with
 * its development login and consent pages, which walkProvider drives over HTTP as a browser would.
 * Any login name signs in as that account (the password is not checked). Accounts named in
 * `groups` carry those groups (scope `groups`).
 */

export interface TestProvider {
  issuer: string;
  close(): Promise<void>;
}

export interface TestProviderClient {
  clientId: string;
  /** Given: a confidential client (client_secret_basic); absent: a public client (PKCE only). */
  clientSecret?: string;
  redirectUri: string;
}

export interface TestProviderOptions {
  /** The provider's clients: the console's, case-admin's. */
  clients: TestProviderClient[];
  /** Groups of some accounts, by login name: `groups` claim (scope `groups`). */
  groups?: Record<string, string[]>;
}

export async function startTestProvider(options: TestProviderOptions): Promise<TestProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const configuration: Configuration = {
    clients: options.clients.map((client) => ({
      client_id: client.clientId,
      ...(client.clientSecret
        ? { client_secret: client.clientSecret, token_endpoint_auth_method: "client_secret_basic" }
        : { token_endpoint_auth_method: "none" }),
      redirect_uris: [client.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    })),
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        email: `${id}@example.org`,
        email_verified: true,
        name: `${id[0]?.toUpperCase() ?? ""}${id.slice(1)} Tester`,
        groups: options.groups?.[id] ?? [],
      }),
    }),
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    scopes: ["openid", "offline_access", "email", "profile", "groups"],
    features: { devInteractions: { enabled: true } },
    // PKCE for every client, S256 only (the provider's default method list)
    pkce: { required: () => true },
    // a refresh token whenever the client may use one (sign-ins keep it sealed in their session)
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    cookies: { keys: ["console-oidc-test-cookie-key-0123456789"] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600, RefreshToken: 86_400 },
  };
  const provider = new Provider(issuer, configuration);
  server.on("request", provider.callback());
  return {
    issuer,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A browser's walk through the provider's pages after a client sent it there: follows the
 * redirects, fills the development login form with `account`, confirms the consent, and stops at
 * the first address outside the provider (the client's callback), which it returns.
 */
export async function walkProvider(provider: TestProvider, authorizationUrl: string, account: string): Promise<string> {
  const cookies = new Map<string, string>();
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  const go = async (url: string, form?: Record<string, string>) => {
    const res = await fetch(new URL(url, provider.issuer), {
      method: form ? "POST" : "GET",
      redirect: "manual",
      headers: {
        cookie: cookieHeader(),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const cookie of res.headers.getSetCookie()) {
      const pair = cookie.split(";")[0]!;
      const at = pair.indexOf("=");
      const value = pair.slice(at + 1);
      if (value === "") cookies.delete(pair.slice(0, at));
      else cookies.set(pair.slice(0, at), value);
    }
    return res;
  };
  let location: string | null = authorizationUrl;
  for (let step = 0; step < 12 && location; step++) {
    const url = new URL(location, provider.issuer);
    if (url.origin !== provider.issuer) return url.href;
    const interaction = /^\/interaction\/([^/?]+)$/.exec(url.pathname);
    if (interaction) {
      const page = await go(url.href);
      const prompt = /name="prompt" value="(\w+)"/.exec(await page.text())?.[1] ?? "login";
      const form: Record<string, string> =
        prompt === "login" ? { prompt, login: account, password: "any" } : { prompt };
      const res = await go(`/interaction/${interaction[1]}`, form);
      await res.arrayBuffer();
      location = res.headers.get("location");
    } else {
      const res = await go(url.href);
      await res.arrayBuffer();
      location = res.headers.get("location");
    }
  }
  throw new Error(`the provider did not send the browser back (ended at ${location})`);
}

/**
 * A whole sign-in of `account` as `client` (authorization code with PKCE, as case-admin's
 * next-auth makes it), redeemed at the provider: its tokens, the refresh token among them.
 */
export async function signInAtProvider(provider: TestProvider, client: TestProviderClient, account: string) {
  const configuration = await oidc.discovery(
    new URL(provider.issuer),
    client.clientId,
    client.clientSecret,
    undefined,
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const authorize = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: client.redirectUri,
    scope: "openid email profile offline_access",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
  });
  const back = await walkProvider(provider, authorize.href, account);
  return oidc.authorizationCodeGrant(configuration, new URL(back), {
    pkceCodeVerifier: codeVerifier,
    expectedState: state,
  });
}
