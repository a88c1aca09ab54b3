import { createHash } from "node:crypto";
import { createMiddleware } from "hono/factory";
import type { z } from "zod";
import { RateLimited } from "@studyflow/domain/errors";
import { normalizeEmail } from "@studyflow/domain/participant-accounts";
import type { AppEnv } from "../../app-env";
import { addressKeys, clientAddress } from "../../client-address";
import { acceptedInput, rateLimit, unlessUnavailable, type RateLimitCheck, type RateLimiter } from "../../rate-limit";

/** Hashed, so Redis holds no addresses; the same for every address, registered or not. */
export const emailKey = (email: string) => createHash("sha256").update(normalizeEmail(email), "utf8").digest("hex");

/**
 * Failed sign-ins (401) are counted in three families of sliding-window tiers. Growing delays: the
 * first failures pass at once, then a client waits for the shortest window to drain (a minute),
 * then a quarter of an hour, then an hour. Only failures count, so a person who types the password
 * right is never slowed by their own success. Every family is kept for any e-mail, registered or
 * not, so no answer tells whether an account exists.
 *
 * Per account and client address: a client that keeps failing for one account is locked out of that
 * account (429, even with the right password). This is the tier that locks, because it is the only
 * one an attacker cannot fill on someone else's behalf.
 */
const PER_ACCOUNT_CLIENT_TIERS = [
  { limit: 5, windowSeconds: 60 },
  { limit: 10, windowSeconds: 15 * 60 },
  { limit: 20, windowSeconds: 60 * 60 },
] as const;
/** Per client address over all accounts (one client trying many), wider: a household or a clinic shares one. */
const PER_ADDRESS_TIERS = [
  { limit: 20, windowSeconds: 60 },
  { limit: 50, windowSeconds: 15 * 60 },
  { limit: 100, windowSeconds: 60 * 60 },
] as const;
/**
 * Per account over all clients: above what one client can reach on its own (10 a quarter hour, 20
 * an hour), so a full tier means several clients are guessing, an attack on the account. A full
 * tier does not lock the account (anyone could lock anyone out that way): it tightens the
 * per-client allowance to UNDER_ATTACK_FAILURES_PER_CLIENT, so a client with no failures of its
 * own for the account (the owner at home) still signs in with the right password.
 */
const PER_ACCOUNT_TIERS = [
  { limit: 20, windowSeconds: 15 * 60 },
  { limit: 40, windowSeconds: 60 * 60 },
] as const;
/**
 * While the account is under attack, a client whose own failures for it within the hour reach
 * this many is refused: one typo is forgiven, a second locks that client. Each address of a
 * distributed guesser gets this many guesses an hour, not the five a minute of a quiet account.
 */
const UNDER_ATTACK_FAILURES_PER_CLIENT = 2;

export const SIGN_IN_LIMIT_MESSAGE = "too many failed sign-in attempts; try again later";

const bucketsOf = (
  prefix: string,
  key: string,
  tiers: readonly { limit: number; windowSeconds: number }[],
): RateLimitCheck[] => tiers.map((tier) => ({ bucket: `${prefix}:${tier.windowSeconds}:${key}`, ...tier }));

/**
 * Failed sign-ins (401) limited per account and client, per client address, and per account, as
 * described at the tiers above. Put in afterBody (after the CASE body reader): the body is JSON by then, and
 * `accountOf` gets it validated. One Redis round trip before the sign-in, one after a failed one.
 *
 * The client is clientAddress(): the socket's peer, or with TRUST_PROXY the address the outermost
 * trusted proxy saw. A participant app's server (PARTICIPANT_APP_ADDRESSES) is one client for every
 * participant it serves: its per-address tiers are skipped, and its per-account-and-client tier is in
 * effect per account for the sign-ins it relays, since studyflow cannot tell its users apart.
 */
export function signInFailureLimits<Json extends z.ZodType>(
  limiter: RateLimiter,
  name: string,
  json: Json,
  accountOf: (body: z.output<Json>) => string,
) {
  const limit = createMiddleware<AppEnv>(async (c, next) => {
    const input = await acceptedInput(c, { json });
    // a request the route refuses as invalid (400, 415) is left to that answer, not counted
    if (!input.accepted) return next();
    const account = accountOf(input.body);
    const ownTiers = bucketsOf(`${name}:account-client`, `${account}:${clientAddress(c)}`, PER_ACCOUNT_CLIENT_TIERS);
    const addressTiers = addressKeys(c).flatMap((address) => bucketsOf(`${name}:address`, address, PER_ADDRESS_TIERS));
    const accountTiers = bucketsOf(`${name}:account`, account, PER_ACCOUNT_TIERS);
    // the client's own failures in the longest tier, against the allowance of an account under attack
    const longest = ownTiers[ownTiers.length - 1]!;
    const underAttackAllowance = { ...longest, limit: UNDER_ATTACK_FAILURES_PER_CLIENT };
    const locking = [...ownTiers, ...addressTiers];
    const decisions = await unlessUnavailable(() =>
      limiter.decideAll([...locking, ...accountTiers, underAttackAllowance], false),
    );
    const lockingDecisions = decisions.slice(0, locking.length);
    const accountDecisions = decisions.slice(locking.length, locking.length + accountTiers.length);
    const allowance = decisions[decisions.length - 1]!;
    for (const decision of lockingDecisions) {
      if (!decision.allowed) throw new RateLimited(SIGN_IN_LIMIT_MESSAGE, decision.retryAfterSeconds);
    }
    const attacked = accountDecisions.filter((decision) => !decision.allowed);
    if (attacked.length > 0 && !allowance.allowed) {
      // either the attack subsides (every full account tier drains) or this client's failures age out
      const attackEnds = Math.max(...attacked.map((decision) => decision.retryAfterSeconds));
      throw new RateLimited(SIGN_IN_LIMIT_MESSAGE, Math.min(attackEnds, allowance.retryAfterSeconds));
    }
    await next();
    // An error thrown further on has become the response by now (hono hands it to app.onError).
    if (c.res.status === 401) {
      await unlessUnavailable(() => limiter.decideAll([...locking, ...accountTiers], true));
    }
  });
  return [limit];
}

/** A plain per-address limit on every request (sign-up, renewals). */
export function perAddress(limiter: RateLimiter, name: string, limit: number, windowSeconds: number, message: string) {
  return rateLimit(limiter, {
    name,
    limit,
    windowSeconds,
    count: "every-request",
    message,
    keys: (c) => addressKeys(c),
  });
}

/**
 * Sign-up mails to one recipient per day, whatever the client: the verify mail of a new account and
 * the notices to the owner of a taken address that someone tried. Without a cap, sign-ups of a
 * taken address from many addresses, or through a participant app's server (which has no
 * per-address limit), would mail its owner once each.
 */
const SIGNUP_MAILS_PER_RECIPIENT = 3;
const SIGNUP_MAILS_WINDOW_SECONDS = 24 * 60 * 60;

/**
 * Takes one of the day's sign-up mails to `email`; false when they are used up. Asked for every
 * sign-up, of a free or a taken address alike, so neither the answer nor a Redis outage (503 for
 * both) tells them apart.
 */
export async function takeSignupMail(limiter: RateLimiter, email: string): Promise<boolean> {
  const decision = await unlessUnavailable(() =>
    limiter.hit(`auth:signup-mail:${emailKey(email)}`, SIGNUP_MAILS_PER_RECIPIENT, SIGNUP_MAILS_WINDOW_SECONDS),
  );
  return decision.allowed;
}
