import { createHash } from "node:crypto";
import { and, eq, gte, isNotNull, lt } from "drizzle-orm";
import { idempotencyKeys, isUniqueViolation, rawClientOf, type Database, type Executor } from "@studyflow/db";
import { Conflict } from "../errors";
import type { TransactionHooks } from "../events/event-runner";

/**
 * How long a key is remembered. A client retries within seconds or minutes (a dropped
 * connection, a tab that comes back online); a day covers a device that was offline overnight,
 * as Stripe's keys do, and keeps the table to a day of writes.
 */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;

/** What a request with an Idempotency-Key claims: its caller's key, for this exact request. */
export interface IdempotencyClaim {
  /** The caller: `participant:<user id>`, `management:<subject>`, … Keys never cross callers. */
  scope: string;
  key: string;
  /** Method and route (e.g. `POST /v1/study-service/events/{studyKey}/submit`), for operators. */
  operation: string;
  /** requestFingerprint of the request. */
  requestHash: string;
}

/** The first answer to a key, as a retry gets it again. */
export interface IdempotencyRecord {
  operation: string;
  requestHash: string;
  status: number;
  response: unknown;
}

/**
 * Thrown inside the event's transaction when another request committed the same key first (the
 * transaction waited for it): this one rolls back and answers with that request's record.
 */
export class IdempotencyKeyTaken extends Conflict {
  constructor() {
    super("another request with this Idempotency-Key was answered first; retry to read its answer");
  }
}

/** JSON with object keys sorted at every level, so that key order does not change a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** SHA-256 of method, path and canonical body: the same request hashes the same, however its keys were ordered. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`, "utf8")
    .digest("hex");
}

const cutoffOf = (nowMs: number) => new Date(nowMs - IDEMPOTENCY_KEY_TTL_MS);

/** The completed, unexpired record of a caller's key; null when there is none (a request may run). */
export async function findIdempotencyRecord(
  db: Executor,
  scope: string,
  key: string,
  nowMs: number,
): Promise<IdempotencyRecord | null> {
  const [row] = await db
    .select({
      operation: idempotencyKeys.operation,
      requestHash: idempotencyKeys.requestHash,
      status: idempotencyKeys.status,
      response: idempotencyKeys.response,
    })
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.scope, scope),
        eq(idempotencyKeys.key, key),
        gte(idempotencyKeys.createdAt, cutoffOf(nowMs)),
        isNotNull(idempotencyKeys.status),
      ),
    );
  if (!row || row.status === null) return null;
  return { operation: row.operation, requestHash: row.requestHash, status: row.status, response: row.response };
}

/**
 * Claims the key in the event's transaction: true when this request may run. The insert waits
 * while another transaction holds the same key uncommitted (Postgres' unique index does the
 * waiting): if that one commits, this claim fails (false) and the caller answers with its record;
 * if it rolls back (an error before anything was written), this one runs. An expired record not
 * yet removed is taken over.
 */
export async function claimIdempotencyKey(tx: Executor, claim: IdempotencyClaim, nowMs: number): Promise<boolean> {
  const fresh = {
    operation: claim.operation,
    requestHash: claim.requestHash,
    status: null,
    response: null,
    createdAt: new Date(nowMs),
    completedAt: null,
  };
  const claimed = await tx
    .insert(idempotencyKeys)
    .values({ scope: claim.scope, key: claim.key, ...fresh })
    .onConflictDoUpdate({
      target: [idempotencyKeys.scope, idempotencyKeys.key],
      set: fresh,
      setWhere: lt(idempotencyKeys.createdAt, cutoffOf(nowMs)),
    })
    .returning({ scope: idempotencyKeys.scope });
  return claimed.length === 1;
}

/** Stores the answer on the claimed key, in the same transaction as the writes it answers for. */
export async function completeIdempotencyKey(
  tx: Executor,
  claim: IdempotencyClaim,
  answer: { status: number; body: unknown },
  nowMs: number,
): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ status: answer.status, response: answer.body, completedAt: new Date(nowMs) })
    .where(and(eq(idempotencyKeys.scope, claim.scope), eq(idempotencyKeys.key, claim.key)));
}

/** The unique index a claim of a taken key runs into (migration 0014). */
const KEY_CONSTRAINT = "idempotency_keys_scope_key_pk";

const isKeyTakenError = (error: unknown) => isUniqueViolation(error, KEY_CONSTRAINT);

/**
 * The claim without a round trip of its own: queued on the transaction's connection now, before
 * any statement of the operation, so the server runs it first (postgres.js keeps a connection's
 * statements in order and pipelines them). An expired record of the key is removed, then the key
 * inserted; a live record makes the insert fail with a unique violation, which aborts the
 * transaction, so the operation's first statement fails and nothing of it runs. A concurrent
 * request's uncommitted claim makes the insert wait (Postgres' unique index) until that one ends.
 * Resolves once claimed; rejects with IdempotencyKeyTaken when the key is taken.
 */
function queueClaim(tx: Executor, claim: IdempotencyClaim, nowMs: number): Promise<void> {
  const sql = rawClientOf(tx);
  const cutoff = cutoffOf(nowMs).toISOString();
  const createdAt = new Date(nowMs).toISOString();
  // .execute() hands each statement to the connection at once (in order), not when awaited
  const expired = sql`
    delete from idempotency_keys
    where scope = ${claim.scope} and key = ${claim.key} and created_at < ${cutoff}::timestamptz`.execute();
  const inserted = sql`
    insert into idempotency_keys (scope, key, operation, request_hash, created_at)
    values (${claim.scope}, ${claim.key}, ${claim.operation}, ${claim.requestHash}, ${createdAt}::timestamptz)`.execute();
  return Promise.all([expired, inserted]).then(
    () => undefined,
    (error: unknown) => {
      throw isKeyTakenError(error) ? new IdempotencyKeyTaken() : error;
    },
  );
}

/**
 * The answer, queued on the transaction's connection now to go with its COMMIT (one round trip).
 * The body is serialised here, so a body that cannot be stored throws before the commit.
 */
function queueAnswer(
  tx: Executor,
  claim: IdempotencyClaim,
  answer: { status: number; body: unknown },
  nowMs: number,
): Promise<unknown> {
  const response = JSON.stringify(answer.body) ?? "null";
  const completedAt = new Date(nowMs).toISOString();
  return rawClientOf(tx)`
    update idempotency_keys
    set status = ${answer.status}, response = ${response}::text::jsonb, completed_at = ${completedAt}::timestamptz
    where scope = ${claim.scope} and key = ${claim.key}`.execute();
}

/**
 * The hooks that make a participant operation (inEventTransaction) idempotent: claim the key
 * first, store `answer(result)` last, both in the operation's transaction and neither with a
 * round trip of its own (the claim goes with the operation's first statement, the answer with
 * the COMMIT; see TransactionHooks). A claim lost to a request that committed first rejects
 * with IdempotencyKeyTaken, rolling this one back before the operation ran any statement.
 */
export function idempotencyTransactionHooks(
  claim: IdempotencyClaim,
  clock: () => number,
  answer: (result: unknown) => { status: number; body: unknown },
): TransactionHooks {
  return {
    beginPipelined: (tx) => queueClaim(tx, claim, clock()),
    withCommit: (tx, result) => queueAnswer(tx, claim, answer(result), clock()),
  };
}

/** Removes the records past their day (the worker's maintenance); returns how many. */
export async function removeExpiredIdempotencyKeys(db: Database, nowMs: number): Promise<number> {
  const removed = await db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.createdAt, cutoffOf(nowMs)))
    .returning({ key: idempotencyKeys.key });
  return removed.length;
}
