/**
 * Idempotency-Key records (safe retries): the first answer to a caller's key, kept for a day and
 * returned to every retry of the same request. See idempotency-keys.ts.
 */
export {
  IDEMPOTENCY_KEY_TTL_MS,
  IdempotencyKeyTaken,
  canonicalJson,
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyRecord,
  idempotencyTransactionHooks,
  removeExpiredIdempotencyKeys,
  requestFingerprint,
  type IdempotencyClaim,
  type IdempotencyRecord,
} from "./idempotency-keys";
