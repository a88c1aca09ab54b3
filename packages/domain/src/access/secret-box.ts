import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Secrets studyflow must read back, sealed at rest with AES-256-GCM under MANAGEMENT_SECRETS_KEY:
 * an identity provider's refresh tokens (management sessions), the console's sign-in state and a
 * new service-account API key for minutes, until its creator's first key list shows it (only its
 * hash is kept for good). A sealed value names the key that sealed it, so a new key can be
 * introduced while values sealed under the previous ones stay readable (MANAGEMENT_SECRETS_PREVIOUS_KEYS)
 * until they are sealed again. Each value is bound to a context (what it is and whose it is, e.g.
 * `management-session:<id>`): a value copied to another row or purpose does not open.
 *
 * Layout: version (1 byte) | key id (8) | IV (12) | GCM tag (16) | ciphertext.
 */

/** AES-256: a key is 32 bytes. */
export const SECRET_KEY_BYTES = 32;
const VERSION = 1;
const KEY_ID_BYTES = 8;
/** GCM's standard nonce length; random per value (2^-32 collision risk only after ~2^32 values per key). */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES;

/** A sealed value that does not open: tampered with, sealed for another context, or under a key no longer configured. */
export class SecretUnreadable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretUnreadable";
  }
}

/** The bytes of a base64 key, or an error saying what is wrong (never the key). */
export function parseSecretKey(base64: string): Buffer {
  const trimmed = base64.trim();
  // Node's base64 decoder reads the URL-safe alphabet too; it skips other characters silently, so refuse them first.
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    throw new Error("must be base64 (e.g. the output of `openssl rand -base64 32`)");
  }
  const key = Buffer.from(trimmed, "base64");
  if (key.length !== SECRET_KEY_BYTES) throw new Error(`must be base64 of ${SECRET_KEY_BYTES} bytes`);
  return key;
}

/** A key's id: the start of a hash of it, so logs and rows can name a key without revealing it. */
function keyIdBytes(key: Buffer): Buffer {
  return createHash("sha256").update("studyflow secret-box key id\0").update(key).digest().subarray(0, KEY_ID_BYTES);
}

/** The id of a key (16 hex characters), as `SecretBox.keyId` and `keyIdOf` show it. */
export function secretKeyId(key: Buffer): string {
  return keyIdBytes(key).toString("hex");
}

const additionalData = (context: string) => Buffer.from(`studyflow secret-box v${VERSION}\0${context}`, "utf8");

export class SecretBox {
  private readonly current: { id: Buffer; key: Buffer };
  private readonly keys: { id: Buffer; key: Buffer }[];

  /** `current` seals; it and `previous` open. Keys are 32 bytes each. */
  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    for (const key of [current, ...previous]) {
      if (key.length !== SECRET_KEY_BYTES) throw new Error(`a secret-box key is ${SECRET_KEY_BYTES} bytes`);
    }
    this.current = { id: keyIdBytes(current), key: Buffer.from(current) };
    this.keys = [this.current, ...previous.map((key) => ({ id: keyIdBytes(key), key: Buffer.from(key) }))];
  }

  /** From configuration: MANAGEMENT_SECRETS_KEY and MANAGEMENT_SECRETS_PREVIOUS_KEYS, base64. */
  static fromBase64(current: string, previous: readonly string[] = []): SecretBox {
    return new SecretBox(parseSecretKey(current), previous.map(parseSecretKey));
  }

  /** The id of the sealing key: store it beside a sealed value to find values to seal again after a rotation. */
  get keyId(): string {
    return this.current.id.toString("hex");
  }

  /** Seals `plaintext` for `context` under the current key. */
  seal(plaintext: string, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(context));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), this.current.id, iv, cipher.getAuthTag(), body]);
  }

  /** The plaintext of a value sealed for `context`; SecretUnreadable otherwise. */
  open(sealed: Uint8Array, context: string): string {
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (bytes.length < HEADER_BYTES || bytes[0] !== VERSION) throw new SecretUnreadable("not a sealed value");
    const id = bytes.subarray(1, 1 + KEY_ID_BYTES);
    const entry = this.keys.find((candidate) => timingSafeEqual(candidate.id, id));
    if (!entry) throw new SecretUnreadable(`sealed under key ${id.toString("hex")}, which is not configured`);
    const iv = bytes.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + IV_BYTES);
    const tag = bytes.subarray(1 + KEY_ID_BYTES + IV_BYTES, HEADER_BYTES);
    const decipher = createDecipheriv("aes-256-gcm", entry.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(context));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretUnreadable("sealed value does not open: altered, or sealed for another context");
    }
  }

  /** The id of the key a value was sealed under (undefined for bytes that are no sealed value). */
  keyIdOf(sealed: Uint8Array): string | undefined {
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (bytes.length < HEADER_BYTES || bytes[0] !== VERSION) return undefined;
    return bytes.subarray(1, 1 + KEY_ID_BYTES).toString("hex");
  }

  /** True when a value was sealed under another key than the current one: seal it again. */
  needsResealing(sealed: Uint8Array): boolean {
    return this.keyIdOf(sealed) !== this.keyId;
  }
}
