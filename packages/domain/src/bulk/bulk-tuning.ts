/**
 * Participants read, evaluated and written per transaction. 1,000 measured fastest on these
 * machines: 5,000 was slower in 11 of 12 runs and took 1.5–2× the memory, and smaller batches
 * pay the per-statement round trips more often.
 */
export const BATCH_SIZE = 1_000;

/**
 * Participants a batch the database runs (see pushdown-sql.ts) covers, unless the caller sets a
 * batch size (tests do, to interleave with other writers). Nothing of such a batch crosses the
 * wire, and one statement per chunk pays once for what every statement pays (the transaction, the
 * checkpoint, the round trips, the count trigger): more than a chunk, so that a chunk, about
 * CHUNK_SIZE when its boundaries are sampled, is one batch.
 */
export const DATABASE_BATCH_SIZE = 40_000;

/**
 * Participants per key-range chunk. Chunks are the unit of parallelism across workers: 25,000
 * gives 4 chunks at 100k (enough for two workers with two jobs each) and 40 at 1M, while each
 * chunk still runs long enough (~1 s) that queue overhead is negligible.
 */
export const CHUNK_SIZE = 25_000;

/** Per-participant errors kept for the result document. */
export const MAX_REPORTED_ERRORS = 1_000;

/**
 * Rule failures recorded per batch (the result document still counts them all). A broken rule
 * fails for every participant; a sample of each batch shows it to researchers without writing a
 * row per participant: at most 5,000 rows for a million participants.
 */
export const MAX_RECORDED_FAILURES_PER_BATCH = 5;
