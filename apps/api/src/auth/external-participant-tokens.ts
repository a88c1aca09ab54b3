import type { ApiConfig } from "../config";
import type { AppDeps } from "../deps";

/**
 * Participant tokens issued by an external OpenID provider (deployments that keep accounts
 * elsewhere): verified against the provider's JWKS with pinned algorithms, issuer and audience,
 * and mapped to a studyflow user on first use. Scaffold: filled by the external-identity work.
 */
export interface ExternalParticipantVerifier {
  /** Whether this token (by its header and issuer) is one this verifier handles. */
  handles(token: string): boolean;
  /** Verifies the token and returns the studyflow user it maps to (created on first use). */
  verify(token: string): Promise<{ userId: string }>;
}

/** Null when no external provider is configured. */
export function createExternalParticipantVerifier(
  config: ApiConfig,
  deps: Pick<AppDeps, "database" | "clock">,
): ExternalParticipantVerifier | null {
  void config;
  void deps;
  return null;
}
