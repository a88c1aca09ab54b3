/**
 * Rows formatted and written as one part per transaction. A wide response row is about 0.5–2 KB
 * of CSV and a JSON response 1–4 KB, so 1,000 rows make a part of one to a few megabytes: small
 * enough that a part (the unit a reader holds in memory, and that a crash redoes) stays cheap, large
 * enough that the per-batch statements (chunk lock, checkpoint, progress) are a small share of the
 * batch. The same number the bulk rule runs measured fastest (bulk-tuning.ts).
 */
export const EXPORT_BATCH_SIZE = 1_000;

/**
 * Rows per chunk of an export. Chunks are what several workers run in parallel; 50,000 rows is
 * 50 batches, a few seconds of formatting, so queue overhead stays negligible while a study of a
 * million responses still splits into 20 chunks for the cluster to share.
 */
export const EXPORT_CHUNK_SIZE = 50_000;
