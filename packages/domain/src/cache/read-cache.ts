import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { CACHE_CHANNEL, CACHE_TOPICS, type CacheTopic, type Executor } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";

/**
 * The rows every request of a busy API reads and almost never sees change: study rows, the
 * current rules version (compiled), permissions, token revocations, service keys, participant
 * token versions and profile owners. A process keeps them in memory; the database announces
 * every committed change of them (triggers of migration 0010, on CACHE_CHANNEL), whoever makes
 * it, and each process forgets what changed. A change therefore takes effect on every replica
 * as soon as its announcement arrives, milliseconds after the commit.
 *
 * Three guards keep a replica from serving what changed:
 *  - nothing is kept while the process is not listening, and everything is forgotten whenever
 *    the listening connection is (re)established, since announcements sent meanwhile are lost;
 *  - a value loaded while an announcement arrived is used once but not kept (it may predate it);
 *  - every entry expires after `maxAgeMs` all the same, should announcements ever stop.
 */
export class ReadCache {
  private readonly stores = new Map<CacheTopic, Map<string, { value: unknown; at: number }>>(
    CACHE_TOPICS.map((topic) => [topic, new Map()]),
  );
  /** Bumped by every invalidation: a load that saw another generation is not kept. */
  private generation = 0;
  private listening = false;
  private readonly waiters = new Map<string, () => void>();
  private listeningWaiters: (() => void)[] = [];

  constructor(private readonly options: ClockContext & { maxEntriesPerTopic?: number; maxAgeMs?: number }) {}

  /**
   * The kept value of `key`, or what `load` finds, kept for the next request when it is not
   * undefined. `load` must read outside any transaction that could still be rolled back.
   */
  async get<V>(topic: CacheTopic, key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const store = this.stores.get(topic)!;
    const now = this.options.clock();
    const kept = store.get(key);
    if (kept && now - kept.at < (this.options.maxAgeMs ?? 60_000)) return kept.value as V;
    const generation = this.generation;
    const value = await load();
    if (value !== undefined && this.listening && generation === this.generation) {
      store.delete(key);
      if (store.size >= (this.options.maxEntriesPerTopic ?? 10_000)) {
        // Maps iterate in insertion order: the first entry is the one kept longest.
        const oldest = store.keys().next();
        if (!oldest.done) store.delete(oldest.value);
      }
      store.set(key, { value, at: now });
    }
    return value;
  }

  /** Forgets one entry (an announcement, or a change this process just committed). */
  invalidate(topic: CacheTopic, key: string): void {
    this.generation += 1;
    this.stores.get(topic)?.delete(key);
  }

  clear(): void {
    this.generation += 1;
    for (const store of this.stores.values()) store.clear();
  }

  /** How many entries a topic holds (for tests and metrics). */
  size(topic: CacheTopic): number {
    return this.stores.get(topic)?.size ?? 0;
  }

  /** Applies one announcement: "<topic>:<key>", or a barrier of settle(). */
  receive(payload: string): void {
    const separator = payload.indexOf(":");
    const topic = payload.slice(0, separator);
    const key = payload.slice(separator + 1);
    if (topic === "barrier") {
      this.waiters.get(key)?.();
      return;
    }
    if ((CACHE_TOPICS as readonly string[]).includes(topic)) this.invalidate(topic as CacheTopic, key);
    // an unknown topic comes from a newer release: forget everything rather than guess
    else this.clear();
  }

  /** The listening connection is (re)established: what was announced meanwhile is unknown. */
  listeningStarted(): void {
    this.clear();
    this.listening = true;
    for (const resolve of this.listeningWaiters.splice(0)) resolve();
  }

  listeningStopped(): void {
    this.listening = false;
    this.clear();
  }

  /**
   * Resolves once every change committed before the call has been announced to this process:
   * a barrier announcement of its own, delivered after them because announcements arrive in
   * commit order. For tests that change rows behind the API's back, and for operators' tools.
   */
  async settle(sql: postgres.Sql, timeoutMs = 5_000): Promise<void> {
    // a barrier sent before the listener listens would never arrive
    if (!this.listening) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the cache was not listening within ${timeoutMs} ms`)),
          timeoutMs,
        );
        this.listeningWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const token = randomUUID();
    const arrived = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(token);
        reject(new Error(`no cache announcement arrived within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(token, () => {
        clearTimeout(timer);
        this.waiters.delete(token);
        resolve();
      });
    });
    await sql`select pg_notify(${CACHE_CHANNEL}, ${`barrier:${token}`})`;
    await arrived;
  }
}

export interface CacheListener {
  /** Stops listening (the cache keeps nothing from then on) and closes the connection. */
  stop: () => Promise<void>;
}

/** How long the listener waits before listening again after its connection failed. */
const RELISTEN_DELAY_MS = 1_000;

/**
 * Listens for announcements on a connection of its own, and keeps listening: when the connection
 * closes the cache stops keeping anything (and forgets what it had) until listening works again,
 * retried every second. postgres.js's own `listen` gives up for good when its reconnect fails
 * while the database is down, which would leave a cache trusting announcements it no longer gets.
 */
export function listenForCacheChanges(
  databaseUrl: string,
  cache: ReadCache,
  onError: (error: unknown) => void = () => undefined,
): CacheListener {
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    clearTimeout(retry);
    retry = setTimeout(() => void start(), RELISTEN_DELAY_MS);
  };
  // `onnotify` is the option postgres.js's own listen() is built on; its types leave it out.
  // The cache tests drive this connection's loss and return (read-cache.test.ts).
  const options = {
    max: 1,
    idle_timeout: 0,
    max_lifetime: null,
    fetch_types: false,
    onnotice: () => undefined,
    connection: { application_name: "studyflow-cache-listener" },
    onnotify: (channel: string, payload: string) => {
      if (channel === CACHE_CHANNEL) cache.receive(payload);
    },
    onclose: () => {
      cache.listeningStopped();
      schedule();
    },
  };
  const sql = postgres(databaseUrl, options as postgres.Options<Record<string, never>>);
  const start = async () => {
    try {
      await sql.unsafe(`listen ${CACHE_CHANNEL}`);
      if (!stopped) cache.listeningStarted();
    } catch (error) {
      if (stopped) return;
      onError(error);
      schedule();
    }
  };
  void start();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      cache.listeningStopped();
      await sql.end({ timeout: 1 });
    },
  };
}

/**
 * The cache serving reads made through a database handle. Attached to the handle (not passed
 * through every call) so the domain's functions keep their signatures; a transaction handle has
 * none, so reads inside a transaction always see the database.
 */
const cacheOfDatabase = new WeakMap<object, ReadCache>();

/**
 * What a transaction of a cached handle changed: forgotten once it has ended (committed or rolled
 * back), since a request reading the entry while it runs would load and keep the old row.
 */
const changesOfTransaction = new WeakMap<object, [CacheTopic, string][]>();

type TransactionRunner = (run: (tx: object) => Promise<unknown>, config?: unknown) => Promise<unknown>;

/**
 * Runs a handle's transactions (and their savepoints) so that what they forget through
 * forgetCached is forgotten again after they end. Without it a change announced by NOTIFY at
 * commit would reach this process's cache a moment after the commit, and the caller's next
 * request could still be served the old row (a revoked token accepted once more).
 */
function forgetAfterTransactions(
  handle: { transaction: TransactionRunner },
  cache: ReadCache,
  changes?: [CacheTopic, string][],
) {
  const begin = handle.transaction.bind(handle);
  handle.transaction = async (run, config) => {
    const own = changes ?? [];
    try {
      return await begin(async (tx) => {
        changesOfTransaction.set(tx, own);
        forgetAfterTransactions(tx as { transaction: TransactionRunner }, cache, own);
        return run(tx);
      }, config);
    } finally {
      if (!changes) for (const [topic, key] of own) cache.invalidate(topic, key);
    }
  };
}

export function attachReadCache(db: Executor, cache: ReadCache): void {
  if (cacheOfDatabase.get(db) === cache) return;
  cacheOfDatabase.set(db, cache);
  forgetAfterTransactions(db as unknown as { transaction: TransactionRunner }, cache);
}

export function readCacheOf(db: Executor): ReadCache | undefined {
  return cacheOfDatabase.get(db);
}

/**
 * After a change: forget it here at once, before its announcement arrives. Inside a transaction
 * of a cached handle it is forgotten again when the transaction ends.
 */
export function forgetCached(db: Executor, topic: CacheTopic, key: string): void {
  const cache = cacheOfDatabase.get(db);
  if (cache) cache.invalidate(topic, key);
  else changesOfTransaction.get(db)?.push([topic, key]);
}
