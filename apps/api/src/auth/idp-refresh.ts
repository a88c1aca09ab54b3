import * as oidc from "openid-client";
import { Unauthorized, Unavailable } from "@studyflow/domain/errors";
import type { ApiConfig } from "../config";
import { lazyDiscovery, providerMessageOf, providerUnreachable } from "./oidc-discovery";

const LABEL = "case-admin's OpenID provider (MANAGEMENT_IDP_ISSUER)";

/** What a refresh at the provider proved: whose token it was, and the refresh token to keep now. */
export interface ProviderRefresh {
  /** The provider's subject of the refreshed grant (its ID token, else its userinfo). */
  subject: string;
  /** The provider's new refresh token when it rotated it, else the one refreshed (still valid). */
  refreshToken: string;
}

/** case-admin's provider as MANAGEMENT_IDP_* name it: refreshes a refresh token its client holds. */
export interface CaseAdminProvider {
  issuer: string;
  /**
   * An OAuth refresh grant with `renewToken` as case-admin's client. 401 when the provider refuses
   * it (unknown, revoked, expired, another client's) or its answer fails openid-client's checks (ID
   * token signature, issuer, audience, expiry); 503 when the provider cannot be reached.
   */
  refresh(renewToken: string): Promise<ProviderRefresh>;
}

/** The provider, or null when none is configured (then a session's own token is the only proof). */
export function caseAdminProvider(config: ApiConfig): CaseAdminProvider | null {
  const issuer = config.MANAGEMENT_IDP_ISSUER;
  const clientId = config.MANAGEMENT_IDP_CLIENT_ID;
  if (issuer === undefined || clientId === undefined) return null;
  const configuration = lazyDiscovery({
    issuer,
    clientId,
    clientSecret: config.MANAGEMENT_IDP_CLIENT_SECRET,
    label: LABEL,
  });
  return {
    issuer,
    async refresh(renewToken) {
      const provider = await configuration();
      try {
        // No `scope`: the grant keeps the scopes it was given (case-admin's renewal asks for
        // `openid offline_access`, which some providers refuse on a refresh).
        const tokens = await oidc.refreshTokenGrant(provider, renewToken);
        let subject = tokens.claims()?.sub;
        if (subject === undefined && provider.serverMetadata().userinfo_endpoint) {
          subject = (await oidc.fetchUserInfo(provider, tokens.access_token, oidc.skipSubjectCheck)).sub;
        }
        if (typeof subject !== "string" || subject === "") {
          throw new Unauthorized("the provider did not say whose refresh token this is (no ID token, no userinfo)");
        }
        return { subject, refreshToken: tokens.refresh_token ?? renewToken };
      } catch (failure) {
        throw describeRefreshFailure(failure);
      }
    },
  };
}

function describeRefreshFailure(error: unknown): Error {
  if (error instanceof Unauthorized || error instanceof Unavailable) return error;
  if (providerUnreachable(error)) {
    return new Unavailable(`${LABEL} could not be reached: ${providerMessageOf(error)}`, { cause: error });
  }
  if (error instanceof oidc.ResponseBodyError) {
    return new Unauthorized(`the provider refused the renew token (${error.error.slice(0, 100)}): sign in again`);
  }
  return new Unauthorized(`the provider's answer to the renew token was not accepted: ${providerMessageOf(error)}`);
}
