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
 * checkpoint, the round trips, the count trigger): more than a chunk, so that a chunk is one batch.
 * Sampled boundaries make chunks of about CHUNK_SIZE: at a million, 0.7–1.4 times it (measured
 * with chunks of 25,000), so the largest stay under 80,000.
 */
export const DATABASE_BATCH_SIZE = 80_000;

/**
 * Participants per key-range chunk. Chunks are the unit of parallelism across workers: 50,000
 * gives 2 chunks at 100k (one for each of two workers, so neither pays a second chunk's start:
 * its job hand-over, its task and study reads, its transaction and the finalisation check) and 20
 * at 1M, where a chunk still runs long enough (0.1–1.5 s) that queue overhead is negligible and a
 * worker that finishes early waits at most one chunk for the other. 25,000 (two chunks per worker
 * at 100k) cost two such starts in series per worker on the short runs where they show most.
 */
export const CHUNK_SIZE = 50_000;

/** Per-participant errors kept for the result document. */
export const MAX_REPORTED_ERRORS = 1_000;

/**
 * Rule failures recorded per batch (the result document still counts them all). A broken rule
 * fails for every participant; a sample of each batch shows it to researchers without writing a
 * row per participant: at most 5,000 rows for a million participants.
 */
export const MAX_RECORDED_FAILURES_PER_BATCH = 5;
