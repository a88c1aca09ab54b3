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
 * breached passwords, no repetitive or sequential passwords, and no composition rules (they push people to "Password1!" and make
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

export const PASSWORD_REPEATS_CHARACTER_MESSAGE =
  "password repeats one character (such as aaaaaaaa): choose one that is harder to guess";
export const PASSWORD_REPEATS_PATTERN_MESSAGE =
  "password repeats a short pattern (such as abcabcabc or 12121212): choose one that is harder to guess";
export const PASSWORD_IS_SEQUENCE_MESSAGE =
  "password is a sequence of letters, digits or keyboard keys (such as 12345678, abcdefgh or qwertyuiop): " +
  "choose one that is harder to guess";

/**
 * The rule in plain language, for the pages where people choose a password (the /reset-password
 * page, the participant app's sign-up). Kept next to checkPasswordRule so the two say the same.
 */
export const PASSWORD_RULE_DESCRIPTION =
  `Use at least ${PASSWORD_MIN_CHARACTERS} characters; a few words with spaces make a good password. ` +
  "Any characters are allowed, and no mix of letters, digits or symbols is required. " +
  "Not accepted: passwords that are on lists of common or leaked passwords, that repeat one character " +
  "(aaaaaaaa), that repeat a short pattern (abcabcabc, 12121212), or that are a sequence of letters, digits " +
  "or keyboard keys (12345678, abcdefgh, qwertyuiop), also when only a few other characters are added. " +
  `At most ${PASSWORD_MAX_BYTES} bytes.`;

/**
 * Orders in which people type runs: the alphabet, the digits and the letter and digit rows of the
 * common keyboard layouts (QWERTY, QWERTZ, AZERTY), lower case. On the number row 0 follows 9,
 * so 1234567890 is one run.
 */
const SEQUENCE_ORDERS = [
  "abcdefghijklmnopqrstuvwxyz",
  "0123456789",
  "1234567890",
  "!@#$%^&*()",
  "qwertyuiop",
  "asdfghjkl",
  "zxcvbnm",
  "qwertzuiop",
  "yxcvbnm",
  "azertyuiop",
  "qsdfghjklm",
  "wxcvbn",
] as const;

/** For each character, the characters that follow it in one of SEQUENCE_ORDERS. */
const FOLLOWERS: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const followers = new Map<string, Set<string>>();
  for (const order of SEQUENCE_ORDERS) {
    for (let i = 0; i + 1 < order.length; i++) {
      const set = followers.get(order[i]!) ?? new Set<string>();
      set.add(order[i + 1]!);
      followers.set(order[i]!, set);
    }
  }
  return followers;
})();

const follows = (before: string, after: string) => FOLLOWERS.get(before)?.has(after) ?? false;

/** Shortest run of one kind that counts (aaa, abc, abab); shorter ones occur in ordinary words. */
const MIN_RUN = 3;
/** Blocks up to this length repeated locally (abab, abcabc, 12341234); longer ones only as the whole password. */
const MAX_LOCAL_BLOCK = 4;
/**
 * "Nearly all" of the password: a password whose runs leave at most this many characters over is
 * refused (12345678!!, qwertyuiop1, aaaaaaaaaaaa99). Four or more characters of its own, beside
 * any run, are left to the length and blocklist rules.
 */
const NEARLY_ALL_SLACK = 3;

type Predictable = "character" | "pattern" | "sequence";

/** Marks [from, to) of `marks` as covered. */
function mark(marks: boolean[], from: number, to: number) {
  for (let i = from; i < to; i++) marks[i] = true;
}

/** Characters covered by runs of one repeated character. */
function repeatedCharacters(chars: readonly string[]): boolean[] {
  const marks = chars.map(() => false);
  for (let start = 0; start < chars.length;) {
    let end = start + 1;
    while (end < chars.length && chars[end] === chars[start]) end++;
    if (end - start >= MIN_RUN) mark(marks, start, end);
    start = end;
  }
  return marks;
}

/**
 * Characters covered by a short block repeated at least twice in a row (abab, 123123), or by the
 * whole password being one block repeated (harbourharbour, abcabcab).
 */
function repeatedBlocks(chars: readonly string[]): boolean[] {
  const marks = chars.map(() => false);
  const n = chars.length;
  for (let period = 2; period <= Math.floor(n / 2); period++) {
    // runs where every character equals the one `period` places before it
    let start = 0;
    for (let i = period; i <= n; i++) {
      if (i < n && chars[i] === chars[i - period]) continue;
      const length = i - start;
      const whole = start === 0 && i === n;
      if (length >= 2 * period && (period <= MAX_LOCAL_BLOCK || whole)) mark(marks, start, i);
      start = i - period + 1;
    }
  }
  return marks;
}

/** Characters covered by ascending or descending runs of SEQUENCE_ORDERS (abcd, 4321, qwerty). */
function sequences(chars: readonly string[]): boolean[] {
  const marks = chars.map(() => false);
  for (const ascending of [true, false]) {
    for (let start = 0; start < chars.length;) {
      let end = start + 1;
      while (
        end < chars.length &&
        (ascending ? follows(chars[end - 1]!, chars[end]!) : follows(chars[end]!, chars[end - 1]!))
      ) {
        end++;
      }
      if (end - start >= MIN_RUN) mark(marks, start, end);
      start = end;
    }
  }
  return marks;
}

/**
 * NIST SP 800-63B asks to refuse repetitive and sequential passwords, not only listed ones. A
 * password is refused when runs of one repeated character, a repeated short block or a sequence
 * cover all of it but at most NEARLY_ALL_SLACK characters; the reason named is the kind of run
 * that covers most. Compared case-insensitively, by code point.
 */
function predictableKind(password: string): Predictable | null {
  const chars = [...password.toLowerCase()];
  const kinds: [Predictable, boolean[]][] = [
    ["character", repeatedCharacters(chars)],
    ["pattern", repeatedBlocks(chars)],
    ["sequence", sequences(chars)],
  ];
  const uncovered = chars.filter((_, i) => !kinds.some(([, marks]) => marks[i])).length;
  if (uncovered > NEARLY_ALL_SLACK) return null;
  const covering = (marks: boolean[]) => marks.filter(Boolean).length;
  // the kind covering most; on a tie the first listed (aaaa is a repeated character, not a pattern)
  let best = kinds[0]!;
  for (const kind of kinds) if (covering(kind[1]) > covering(best[1])) best = kind;
  return best[0];
}

const PREDICTABLE_MESSAGES: Record<Predictable, string> = {
  character: PASSWORD_REPEATS_CHARACTER_MESSAGE,
  pattern: PASSWORD_REPEATS_PATTERN_MESSAGE,
  sequence: PASSWORD_IS_SEQUENCE_MESSAGE,
};

/**
 * Checks a new password against the policy (PASSWORD_RULE_DESCRIPTION). Returns null when it is
 * acceptable, otherwise a message that names the field (`password`) and the reason and can be shown
 * to the user as is. Every place a password is set calls it: sign-up, change, reset, the CLI.
 */
export function checkPasswordRule(password: string): string | null {
  if (Buffer.byteLength(password, "utf8") > PASSWORD_MAX_BYTES) return PASSWORD_TOO_LONG_MESSAGE;
  // code points, not UTF-16 units: an emoji is one character to the person typing it
  if ([...password].length < PASSWORD_MIN_CHARACTERS) return PASSWORD_TOO_SHORT_MESSAGE;
  if (commonPasswordSet().has(password.toLowerCase())) return PASSWORD_TOO_COMMON_MESSAGE;
  const predictable = predictableKind(password);
  if (predictable) return PREDICTABLE_MESSAGES[predictable];
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

/** The PHC string of a hash made with PASSWORD_HASH_PARAMETERS, up to its salt. */
const CURRENT_HASH_PREFIX =
  `$argon2id$v=19$m=${PASSWORD_HASH_PARAMETERS.memoryCost},t=${PASSWORD_HASH_PARAMETERS.timeCost},` +
  `p=${PASSWORD_HASH_PARAMETERS.parallelism}$`;
/** The hash's base64 (no padding) length at PASSWORD_HASH_PARAMETERS.outputLen bytes. */
const CURRENT_HASH_LENGTH = Math.ceil((PASSWORD_HASH_PARAMETERS.outputLen * 4) / 3);

/**
 * Whether a stored hash was made with other parameters than today's, so a login can re-hash the
 * password it has just verified: weaker ones, and also the heavier ones of an account imported from
 * CASE (case-backend's pwhash: 64 MiB, four passes), whose every sign-in would otherwise cost
 * several times the memory and time studyflow budgets per hash.
 */
export function passwordHashNeedsUpgrade(encodedHash: string): boolean {
  // Nearly every stored hash is today's: told apart by its text, without the native parse (a call
  // that cost a sign-in's main thread about 3 % of its CPU).
  if (encodedHash.startsWith(CURRENT_HASH_PREFIX)) {
    const saltAndHash = encodedHash.slice(CURRENT_HASH_PREFIX.length).split("$");
    if (saltAndHash.length === 2 && saltAndHash[1]!.length === CURRENT_HASH_LENGTH) return false;
  }
  const stored = parseOptions(encodedHash);
  const storedAlgorithm: number = stored.algorithm;
  const storedVersion: number = stored.version;
  return (
    storedAlgorithm !== PASSWORD_HASH_PARAMETERS.algorithm ||
    storedVersion !== PASSWORD_HASH_PARAMETERS.version ||
    stored.memoryCost !== PASSWORD_HASH_PARAMETERS.memoryCost ||
    stored.timeCost !== PASSWORD_HASH_PARAMETERS.timeCost ||
    stored.parallelism !== PASSWORD_HASH_PARAMETERS.parallelism ||
    stored.outputLen !== PASSWORD_HASH_PARAMETERS.outputLen
  );
}
