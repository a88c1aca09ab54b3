import * as oidc from "openid-client";
import { Invalid, Unavailable } from "@studyflow/domain/errors";
import {
  lazyDiscovery,
  providerMessageOf as messageOf,
  providerUnreachable as unreachable,
} from "../../auth/oidc-discovery";
import type { ApiConfig } from "../../config";

/** The console's OpenID provider as CONSOLE_OIDC_* name it. */
export interface ConsoleProvider {
  /** Shown on the sign-in button: CONSOLE_OIDC_PROVIDER_NAME, else the issuer's host. */
  name: string;
  issuer: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  /** The claim and value that make a person an admin, when configured. */
  admin: { claim: string; value: string } | null;
  /** The provider's metadata, discovered on first use and kept; a failed discovery is tried again next time. */
  configuration(): Promise<oidc.Configuration>;
}

/** The provider, or null when the console signs in with none (then its routes do not exist). */
export function consoleProvider(config: ApiConfig): ConsoleProvider | null {
  const issuer = config.CONSOLE_OIDC_ISSUER;
  const clientId = config.CONSOLE_OIDC_CLIENT_ID;
  const redirectUri = config.CONSOLE_OIDC_REDIRECT_URI;
  if (issuer === undefined || clientId === undefined || redirectUri === undefined) return null;
  // A confidential client proves itself with its secret (HTTP Basic); a public one has PKCE only.
  const configuration = lazyDiscovery({
    issuer,
    clientId,
    clientSecret: config.CONSOLE_OIDC_CLIENT_SECRET,
    label: "the console's OpenID provider",
  });
  const adminClaim = config.CONSOLE_OIDC_ADMIN_CLAIM;
  const adminValue = config.CONSOLE_OIDC_ADMIN_VALUE;
  return {
    name: config.CONSOLE_OIDC_PROVIDER_NAME ?? new URL(issuer).host,
    issuer,
    clientId,
    redirectUri,
    scope: config.CONSOLE_OIDC_SCOPES.join(" "),
    admin: adminClaim !== undefined && adminValue !== undefined ? { claim: adminClaim, value: adminValue } : null,
    configuration,
  };
}

/**
 * What the code grant's failure says, as the error answered to the browser: the provider's refusal
 * (`invalid_grant` for a used or wrong code) or a check of its answer that failed (ID token
 * signature, issuer, audience, nonce, expiry).
 */
export function describeGrantFailure(error: unknown): Error {
  if (error instanceof Unavailable || error instanceof Invalid) return error;
  if (unreachable(error)) {
    return new Unavailable(`the console's OpenID provider could not be reached: ${messageOf(error)}`, { cause: error });
  }
  if (error instanceof oidc.ResponseBodyError) {
    const description = error.error_description ? ` (${error.error_description.slice(0, 200)})` : "";
    return new Invalid(`the provider refused the authorization code: ${error.error.slice(0, 100)}${description}`);
  }
  if (error instanceof oidc.AuthorizationResponseError) {
    return new Invalid(`the provider refused the sign-in: ${error.error.slice(0, 100)}`);
  }
  return new Invalid(`the provider's answer was not accepted: ${messageOf(error)}`);
}
