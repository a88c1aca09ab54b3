import type { ClockContext } from "../foundation/clock";

/**
 * What the data explorer remembers between page requests of one query (a study, a filter and an
 * order), so that deep pages stay fast: the keys at page boundaries, from which a later page seeks
 * instead of skipping every row before it, and the total count, which CASE's answer carries on
 * every page and which costs a scan of every matching row.
 *
 * Both are kept briefly and per process. What a researcher sees meanwhile: a page read from a
 * remembered boundary starts after that boundary's row even when rows were added or removed before
 * it since (a page may be shifted by those rows), and totalCount may lag by as many rows, for at
 * most the entry's life. A delete through the explorer forgets its study's entries at once.
 * Queries kept counts answer (time-buckets.ts) do not use it: their totals and places are exact.
 */
export interface ExplorerPageCacheOptions extends ClockContext {
  /**
   * How long a query's boundaries and count are kept after they were learned.
   * @defaultValue 30 000 ms: long enough for a researcher paging through a result, short enough
   * that new submissions show up without a reload trick.
   */
  ttlMs?: number;
  /**
   * Queries remembered at once; the least recently used is dropped.
   * @defaultValue 500: a few hundred researchers' open result lists, each entry a count and at most
   * MAX_BOUNDARIES keys.
   */
  maxEntries?: number;
}

/** Boundaries kept per query: 1 000 pages of any size, a few hundred kilobytes at most. */
const MAX_BOUNDARIES = 1_000;

interface Entry {
  studyKey: string;
  learnedAt: number;
  count?: number;
  /** position → the order values of the row at that position (a page starting there starts with it). */
  boundaries: Map<number, unknown[]>;
}

export class ExplorerPageCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: ExplorerPageCacheOptions) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 500;
    this.now = options.clock;
  }

  private entry(key: string, studyKey: string, create: boolean): Entry | undefined {
    const found = this.entries.get(key);
    if (found && this.now() - found.learnedAt <= this.ttlMs) {
      // most recently used last: Map keeps insertion order
      this.entries.delete(key);
      this.entries.set(key, found);
      return found;
    }
    if (found) this.entries.delete(key);
    if (!create) return undefined;
    const fresh: Entry = { studyKey, learnedAt: this.now(), boundaries: new Map() };
    this.entries.set(key, fresh);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return fresh;
  }

  /** The remembered count of the query, or the loaded one (then remembered). */
  async count(key: string, studyKey: string, load: () => Promise<number>): Promise<number> {
    const known = this.entry(key, studyKey, false)?.count;
    if (known !== undefined) return known;
    const count = await load();
    this.entry(key, studyKey, true)!.count = count;
    return count;
  }

  /** The remembered boundary nearest before `position` (at most `position`), if any. */
  nearestBoundary(
    key: string,
    studyKey: string,
    position: number,
  ): { position: number; values: unknown[] } | undefined {
    const entry = this.entry(key, studyKey, false);
    if (!entry) return undefined;
    let best: { position: number; values: unknown[] } | undefined;
    for (const [at, values] of entry.boundaries) {
      if (at <= position && (!best || at > best.position)) best = { position: at, values };
    }
    return best;
  }

  /** Remembers the order values of the row at `position` (in the query's order). */
  remember(key: string, studyKey: string, position: number, values: unknown[]): void {
    const entry = this.entry(key, studyKey, true)!;
    if (entry.boundaries.size >= MAX_BOUNDARIES && !entry.boundaries.has(position)) return;
    entry.boundaries.set(position, values);
  }

  /** Forgets every query of the study (after a delete changed its rows). */
  forgetStudy(studyKey: string): void {
    for (const [key, entry] of this.entries) if (entry.studyKey === studyKey) this.entries.delete(key);
  }
}
