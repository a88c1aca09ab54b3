import { readFileSync } from "node:fs";
import { hash, parseOptions, verify, type Options } from "@node-rs/argon2";

/**
 * argon2id parameters, always passed explicitly so that a missing setting can never silently
 * weaken the hash (the old service ran with zeros when its config lacked them). 19 MiB, two
 * passes, one lane is the OWASP baseline for argon2id: about 20–40 ms per hash on one core,
 * affordable per request, costly for an offline guesser.
 */
export const PASSWORD_HASH_PARAMETERS = {
  // Argon2id; @node-rs/argon2 declares its enums as ambient const enums, which isolatedModules cannot read.
  algorithm: 2,
  // Version 0x13, the current one.
  version: 1,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
  outputLen: 32,
} as const satisfies Options;

/**
 * NIST SP 800-63B (5.1.1.2) style: a length floor, a generous ceiling, a blocklist of common and
 * breached passwords, and no composition rules (they push people to "Password1!" and make
 * passwords harder to remember, not harder to guess). Length counts characters (code points),
 * as a person counts them; the ceiling counts bytes too, since that is what the hash consumes.
 */
export const PASSWORD_MIN_CHARACTERS = 8;
/** At least 64 characters must be allowed (NIST); 512 bytes keeps hashing a request's password cheap. */
export const PASSWORD_MAX_BYTES = 512;

export const PASSWORD_TOO_SHORT_MESSAGE = `password must be at least ${PASSWORD_MIN_CHARACTERS} characters long`;
export const PASSWORD_TOO_LONG_MESSAGE = `password must be at most ${PASSWORD_MAX_BYTES} bytes long (UTF-8)`;
export const PASSWORD_TOO_COMMON_MESSAGE =
  "password is too common: choose one that is not on lists of leaked passwords";

let commonPasswords: ReadonlySet<string> | undefined;

/** Loaded on first use, so importing this module costs nothing for code that never checks a password. */
function commonPasswordSet(): ReadonlySet<string> {
  if (!commonPasswords) {
    const text = readFileSync(new URL("./common-passwords.txt", import.meta.url), "utf8");
    commonPasswords = new Set(
      text
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line !== "" && !line.startsWith("#"))
        .map((line) => line.toLowerCase()),
    );
  }
  return commonPasswords;
}

/**
 * Checks a new password against the policy. Returns null when it is acceptable, otherwise a
 * message that names the field (`password`) and can be shown to the user as is.
 */
export function checkPasswordRule(password: string): string | null {
  if (Buffer.byteLength(password, "utf8") > PASSWORD_MAX_BYTES) return PASSWORD_TOO_LONG_MESSAGE;
  // code points, not UTF-16 units: an emoji is one character to the person typing it
  if ([...password].length < PASSWORD_MIN_CHARACTERS) return PASSWORD_TOO_SHORT_MESSAGE;
  if (commonPasswordSet().has(password.toLowerCase())) return PASSWORD_TOO_COMMON_MESSAGE;
  return null;
}

/** The argon2id hash of a password in PHC string form (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`). */
export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_PARAMETERS);
}

/** Whether a password matches a stored hash; the parameters are read from the hash itself. */
export function verifyPassword(encodedHash: string, password: string): Promise<boolean> {
  return verify(encodedHash, password);
}

/**
 * Whether a stored hash was made with weaker parameters than today's, so a login can
 * re-hash the password it has just verified.
 */
export function passwordHashNeedsUpgrade(encodedHash: string): boolean {
  const stored = parseOptions(encodedHash);
  const storedAlgorithm: number = stored.algorithm;
  return (
    storedAlgorithm !== PASSWORD_HASH_PARAMETERS.algorithm ||
    stored.memoryCost < PASSWORD_HASH_PARAMETERS.memoryCost ||
    stored.timeCost < PASSWORD_HASH_PARAMETERS.timeCost ||
    stored.outputLen < PASSWORD_HASH_PARAMETERS.outputLen
  );
}
