/**
 * Rows formatted and written as one part per transaction. A wide response row is about 0.5–2 KB
 * of CSV and a JSON response 1–4 KB, so 1,000 rows make a part of one to a few megabytes: small
 * enough that a part (the unit a reader holds in memory, and that a crash redoes) stays cheap, large
 * enough that the per-batch statements (chunk lock, checkpoint, progress) are a small share of the
 * batch. The same number the bulk rule runs measured fastest (bulk-tuning.ts).
 */
export const EXPORT_BATCH_SIZE = 1_000;

/**
 * Rows per chunk of an export. Chunks are what several workers run in parallel; 10,000 rows is
 * 10 batches, about a second of formatting, so queue overhead stays negligible. Measured with the
 * export bench (100,000 wide responses, 2 worker processes of concurrency 2): 50,000-row chunks
 * made two chunks that one process often took both of, 0.50× the COPY floor; 10,000 gave 0.55×.
 */
export const EXPORT_CHUNK_SIZE = 10_000;
