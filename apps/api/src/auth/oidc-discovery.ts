import * as oidc from "openid-client";
import { Unavailable } from "@studyflow/domain/errors";

/**
 * Seconds one call to a provider (discovery, token, userinfo) may take: a provider that does not
 * answer fails the request with 503 instead of holding it for openid-client's 30 s.
 */
export const PROVIDER_TIMEOUT_SECONDS = 10;

/** An OpenID provider and studyflow's client there, as the settings name them. */
export interface OidcClientSettings {
  issuer: string;
  clientId: string;
  /** Given: a confidential client (HTTP Basic); absent: a public client. */
  clientSecret: string | undefined;
  /** Who this client is, for the 503 when the provider is out of reach ("the console's OpenID provider"). */
  label: string;
}

/**
 * The provider's metadata with the client, discovered on first use and kept; a failed discovery is
 * tried again next time (503 meanwhile). Plain HTTP only where loadConfig allows it (outside
 * production): a provider on localhost in development and tests.
 */
export function lazyDiscovery(settings: OidcClientSettings): () => Promise<oidc.Configuration> {
  const { issuer, clientId, clientSecret, label } = settings;
  const clientAuth = clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret);
  const execute = new URL(issuer).protocol === "http:" ? [oidc.allowInsecureRequests] : [];
  let discovered: Promise<oidc.Configuration> | undefined;
  return () => {
    discovered ??= oidc
      .discovery(new URL(issuer), clientId, clientSecret, clientAuth, { execute, timeout: PROVIDER_TIMEOUT_SECONDS })
      .catch((error: unknown) => {
        discovered = undefined;
        throw new Unavailable(`${label} could not be reached: ${providerMessageOf(error)}`, { cause: error });
      });
    return discovered;
  };
}

/** An error's message with its cause, short enough for an answer. */
export const providerMessageOf = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
  return (cause && cause !== message ? `${message}: ${cause}` : message).slice(0, 300);
};

/** Whether a failure is the provider being out of reach (503), not its refusal of what was sent. */
export const providerUnreachable = (error: unknown): boolean =>
  error instanceof TypeError ||
  (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) ||
  (error instanceof Error && error.cause instanceof TypeError);
