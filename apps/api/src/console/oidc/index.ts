import { SecretBox } from "@studyflow/domain/access";
import { createRouter } from "../../routes/create-router";
import type { AppDeps } from "../../deps";
import { consoleSessions } from "../../auth/console-session-cookie";
import { registerCallback } from "./callback";
import { registerConfig } from "./config";
import { registerLogin } from "./login";
import { consoleProvider } from "./provider";
import { registerSession } from "./session";
import { registerSignOut } from "./sign-out";
import type { ConsoleSignIn } from "./sign-in";

/**
 * The console's OpenID Connect sign-in below /console/oidc: routes for the browser, hidden from
 * the API document like /console itself. `config` always answers (the sign-in page asks
 * it whether to show the provider's button); the others exist only with CONSOLE_OIDC_* set.
 *
 * - config: {enabled, providerName}
 * - login: starts an attempt (state, nonce, PKCE S256) and sends the browser to the provider
 * - callback: the provider's redirect back; checks the attempt, redeems the code, signs in
 * - session: who the cookie signs in, with the CSRF token every cookie request carries
 * - sign-out (POST): ends the session and removes the cookie
 */
export function createConsoleOidcRouter(deps: AppDeps) {
  const router = createRouter();
  const provider = consoleProvider(deps.config);
  const sessions = consoleSessions(deps.config);
  const key = deps.config.MANAGEMENT_SECRETS_KEY;
  registerConfig(router, { enabled: provider !== null && sessions !== null, providerName: provider?.name ?? null });
  if (!provider || !sessions || key === undefined) return router;
  const signIn: ConsoleSignIn = {
    deps,
    provider,
    sessions,
    box: SecretBox.fromBase64(key, deps.config.MANAGEMENT_SECRETS_PREVIOUS_KEYS),
    now: () => new Date(deps.clock()),
  };
  registerLogin(router, signIn);
  registerCallback(router, signIn);
  registerSession(router, signIn);
  registerSignOut(router, signIn);
  return router;
}
