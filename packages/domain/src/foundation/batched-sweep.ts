/** What a sweep removed and how many statements it took. */
export interface BatchedSweep {
  /** Rows removed. */
  removed: number;
  /** Statements it took: how many batches were needed. */
  batches: number;
}

/**
 * Runs `removeBatch` (one statement deleting at most `batchSize` rows, its own short transaction)
 * until a batch comes back short or `maxBatches` ran: a sweep after a long outage never holds
 * thousands of row locks at once, and the next round goes on where this one stopped.
 */
export async function sweepInBatches(
  removeBatch: (batchSize: number) => Promise<number>,
  options: { batchSize: number; maxBatches: number },
): Promise<BatchedSweep> {
  const sweep: BatchedSweep = { removed: 0, batches: 0 };
  while (sweep.batches < options.maxBatches) {
    const removed = await removeBatch(options.batchSize);
    sweep.batches += 1;
    sweep.removed += removed;
    if (removed < options.batchSize) break;
  }
  return sweep;
}
