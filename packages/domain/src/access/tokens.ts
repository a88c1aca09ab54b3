import { SignJWT } from "jose";

/** Every token names its kind, so a participant token can never pass as a management token. */
export const MANAGEMENT_TOKEN_TYPE = "management";
export const PARTICIPANT_TOKEN_TYPE = "participant";
export const TOKEN_ISSUER = "studyflow";

const encoder = new TextEncoder();
export const hmacKey = (secret: string) => encoder.encode(secret);

export interface ManagementTokenInput {
  subject: string;
  isAdmin: boolean;
  secret: string;
  /** Lifetime in seconds. */
  ttlSeconds?: number;
  /** When it is issued, in milliseconds since the epoch. */
  now: number;
}

export function mintManagementToken(input: ManagementTokenInput): Promise<string> {
  const iat = Math.floor(input.now / 1000);
  return new SignJWT({ typ: MANAGEMENT_TOKEN_TYPE, admin: input.isAdmin })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(input.subject)
    .setIssuer(TOKEN_ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (input.ttlSeconds ?? 3_600))
    .sign(hmacKey(input.secret));
}

export interface ParticipantTokenInput {
  userId: string;
  /** The user's current token version; a password reset bumps it and retires older tokens. */
  tokenVersion: number;
  secret: string;
  ttlSeconds?: number;
  /** When it is issued, in milliseconds since the epoch. */
  now: number;
  /**
   * The sign-in session the token belongs to (`sid`): signing out of it ends the token at once.
   * Tokens an operator mints (CLI `token:participant`) have none and end only by expiry or a
   * token-version bump.
   */
  sessionId?: string;
}

/** Name of the session claim of participant tokens. */
export const SESSION_ID_CLAIM = "sid";

export function mintParticipantToken(input: ParticipantTokenInput): Promise<string> {
  const iat = Math.floor(input.now / 1000);
  const claims: Record<string, unknown> = { typ: PARTICIPANT_TOKEN_TYPE, tv: input.tokenVersion };
  if (input.sessionId !== undefined) claims[SESSION_ID_CLAIM] = input.sessionId;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(input.userId)
    .setIssuer(TOKEN_ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (input.ttlSeconds ?? 3_600))
    .sign(hmacKey(input.secret));
}
