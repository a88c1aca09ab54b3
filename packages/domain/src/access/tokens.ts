import { createHmac } from "node:crypto";

/** Every token names its kind, so a participant token can never pass as a management token. */
export const MANAGEMENT_TOKEN_TYPE = "management";
export const PARTICIPANT_TOKEN_TYPE = "participant";
export const TOKEN_ISSUER = "studyflow";

const encoder = new TextEncoder();
export const hmacKey = (secret: string) => encoder.encode(secret);

/** base64url of the JWS header of every token minted here, `{"alg":"HS256","typ":"JWT"}`. */
const HS256_HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

/**
 * An HS256 JWT of `claims` (in their order), as jose's SignJWT writes it, byte for byte: signed
 * with node:crypto's HMAC on the calling thread. jose signs through WebCrypto, whose every
 * signature is a job on libuv's thread pool, where a sign-in's waits behind the argon2 runs that
 * fill it, and which costs the main thread more than the HMAC itself.
 */
function signHs256(claims: Record<string, unknown>, secret: string): Promise<string> {
  const signingInput = `${HS256_HEADER}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  const signature = createHmac("sha256", secret).update(signingInput).digest("base64url");
  return Promise.resolve(`${signingInput}.${signature}`);
}

/** The registered claims every token carries, after its own ones (jose's order). */
function timed(claims: Record<string, unknown>, subject: string, now: number, ttlSeconds: number) {
  const iat = Math.floor(now / 1000);
  const exp = iat + ttlSeconds;
  // as jose refuses them
  if (!Number.isFinite(iat) || !Number.isFinite(exp)) throw new TypeError("token times must be finite numbers");
  return { ...claims, sub: subject, iss: TOKEN_ISSUER, iat, exp };
}

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
  const claims = { typ: MANAGEMENT_TOKEN_TYPE, admin: input.isAdmin };
  return signHs256(timed(claims, input.subject, input.now, input.ttlSeconds ?? 3_600), input.secret);
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
  const claims: Record<string, unknown> = { typ: PARTICIPANT_TOKEN_TYPE, tv: input.tokenVersion };
  if (input.sessionId !== undefined) claims[SESSION_ID_CLAIM] = input.sessionId;
  return signHs256(timed(claims, input.userId, input.now, input.ttlSeconds ?? 3_600), input.secret);
}
