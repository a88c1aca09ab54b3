import { randomBytes } from "node:crypto";
import {
  applyRules,
  type ApplyResult,
  type EngineEnv,
  type ParticipantState,
  type StudyEvent,
} from "@studyflow/engine";
import type { PgDialect } from "drizzle-orm/pg-core";
import { PostgresJsSession, PostgresJsTransaction, type PostgresJsSessionOptions } from "drizzle-orm/postgres-js";
import type { Sql } from "postgres";
import { isDatabaseUnavailable, rawClientOf, type Database, type Executor, type Transaction } from "@studyflow/db";
import { readCacheOf, type ReadCache } from "../cache/read-cache";
import { CommitOutcomeUnknown } from "../errors";
import type { ClockContext } from "../foundation/clock";
import { createPostgresEngineServices, type ExternalServiceCaller } from "../rules/postgres-engine-services";
import { loadCurrentRules } from "../rules/study-rules";
import type { StudyRow } from "../studies/study-repository";
import { RulesRejectedEvent, recordRuleFailures, type RuleFailureRecord } from "./rule-failures";

/** What domain operations need from their caller besides the database. */
export interface DomainContext extends ClockContext {
  callExternalService?: ExternalServiceCaller;
  /** Told of the rule failures of every event once they are recorded (metrics). */
  onRuleFailures?: (failures: readonly RuleFailureRecord[]) => void;
  /** Work of the caller's that must commit or roll back with the event (an Idempotency-Key record). */
  transactionHooks?: TransactionHooks;
}

/**
 * Run inside a participant operation's transaction (inEventTransaction), so what they write
 * commits with the event or not at all: a crash between the event and its record cannot happen.
 */
export interface TransactionHooks {
  /** First in the transaction, before the operation reads anything (may wait for a lock, or throw). */
  begin?: (tx: Executor) => Promise<void>;
  /**
   * First in the transaction too, without a round trip of its own: it must hand its statements to
   * the transaction's connection before it returns (postgres.js queries started with `.execute()`),
   * so the server runs them before any of the operation's, which starts at once (its first
   * statement goes in the same round trip). To stop the operation it must fail on the server: the
   * failure aborts the transaction, the operation's next statement fails, and the hook's rejection
   * is what the operation throws. Its promise is settled before anything commits.
   */
  beginPipelined?: (tx: Executor) => Promise<void>;
  /** Last in the transaction, with the operation's result. */
  beforeCommit?: (tx: Executor, result: unknown) => Promise<void>;
  /**
   * Last of all, without a round trip of its own: it must hand its statements to the connection
   * before it returns (as beginPipelined), and they go to the server with the COMMIT. A statement
   * that fails there aborts the transaction, which turns the COMMIT into a rollback: its rejection
   * (awaited after the COMMIT) is then what the operation throws, and nothing was stored.
   */
  withCommit?: (tx: Executor, result: unknown) => Promise<unknown>;
}

/** The context inside one event transaction: the rule failures recorded so far. */
export interface EventContext extends DomainContext {
  readonly failures: RuleFailureRecord[];
  /** The read cache of the database the event runs on, when the process keeps one (the API). */
  readonly cache: ReadCache | undefined;
  /**
   * Takes the event's last statements, already handed to the connection (postgres.js queries
   * started with `.execute()`), so that they go to the server with the COMMIT: one round trip for
   * both. `sent` settles with their answers, after the COMMIT went out, and nothing may depend on
   * those answers before it: a check of them must fail on the server. A failure among them aborts
   * the transaction, the COMMIT then rolls it back, and `sent`'s rejection is what the operation
   * throws (as for TransactionHooks.withCommit).
   */
  sendWithCommit(sent: Promise<unknown>): void;
}

/**
 * Uniform in [0, 1) from the operating system's generator, with the 53 bits a double holds:
 * 7 random bytes, the top 53 of their 56 bits. (crypto.randomInt cannot do this: its range must
 * stay below 2^48.)
 */
export function secureRandom(): number {
  const bytes = randomBytes(7);
  let value = 0;
  for (const byte of bytes) value = value * 256 + byte;
  return Math.floor(value / 8) / 2 ** 53;
}

export function newMessageId(): string {
  return randomBytes(12).toString("hex");
}

/** The study's settings the engine needs: its key and its calendar's time zone. */
export type StudyForRules = Pick<StudyRow, "key" | "config">;

export function engineEnvFor(tx: Executor, study: StudyForRules, ctx: DomainContext): EngineEnv {
  return {
    services: createPostgresEngineServices(tx, study.key, ctx.clock, ctx.callExternalService),
    clock: ctx.clock,
    random: secureRandom,
    newId: newMessageId,
    timeZone: study.config.timeZone ?? "UTC",
  };
}

export interface RuleRun {
  result: ApplyResult;
  /** The rules version that ran; null when the study has no rules. */
  rulesVersion: number | null;
}

/**
 * Runs the study's current rules for one event inside the caller's transaction. A study without
 * rules leaves the state as it is. A failing rule is skipped and the later ones run; a strict
 * study stops at it instead (the caller then rejects the event).
 */
export async function runEventRules(
  tx: Executor,
  study: StudyForRules,
  state: ParticipantState,
  event: StudyEvent,
  ctx: EventContext,
): Promise<RuleRun> {
  const rules = await loadCurrentRules(tx, study.key, ctx.cache);
  if (!rules) return { result: { state, reports: [], effects: [], changedPerRule: [] }, rulesVersion: null };
  const result = await applyRules(rules.compiled, state, event, engineEnvFor(tx, study, ctx), {
    onRuleError: study.config.strictRules === true ? "stop" : "continue",
  });
  return { result, rulesVersion: rules.version };
}

/**
 * `db.transaction(work)` without what drizzle builds for each transaction of a database made with
 * a schema: a relational query builder per table (`tx.query.*`), some fifty objects, which no
 * event statement uses (about 14 µs of every event, and their garbage). The same session options,
 * savepoints for nested transactions, rollback().
 */
function eventTransaction<T>(db: Database, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const { session } = db._;
  if (!(session instanceof PostgresJsSession)) return db.transaction(work);
  // the database's dialect and session options, as drizzle's own transaction takes them
  const { dialect } = db as unknown as { dialect: PgDialect };
  const { options } = session as unknown as { options: PostgresJsSessionOptions };
  return rawClientOf(db).begin(async (client) => {
    const txSession = new PostgresJsSession(client as unknown as Sql, dialect, undefined, options);
    // drizzle types the transaction's session with postgres.js's TransactionSql, which its Sql bound refuses
    return work(new PostgresJsTransaction(dialect, txSession as never, undefined) as unknown as Transaction);
  }) as Promise<T>;
}

/**
 * Runs one participant operation in a transaction. The rule failures its events record commit
 * with it; when a strict study rejects the event, the transaction rolls back and the failures
 * are recorded on their own, so researchers see them either way.
 */
export async function inEventTransaction<T>(
  db: Database,
  ctx: DomainContext,
  work: (tx: Executor, eventCtx: EventContext) => Promise<T>,
): Promise<T> {
  // Statements sent with the COMMIT, in the order they were sent; each is settled after it.
  const sentWithCommit: Promise<unknown>[] = [];
  const sendWithCommit = (sent: Promise<unknown>) => {
    // its rejection is read after the COMMIT (or after a rollback), never left unhandled
    sent.catch(() => undefined);
    sentWithCommit.push(sent);
  };
  const eventCtx: EventContext = { ...ctx, failures: [], cache: readCacheOf(db), sendWithCommit };
  let committing = false;
  try {
    const hooks = ctx.transactionHooks;
    const result = await eventTransaction(db, async (tx) => {
      await hooks?.begin?.(tx);
      const begun = hooks?.beginPipelined?.(tx);
      const done = begun ? await workAfter(begun, work(tx, eventCtx)) : await work(tx, eventCtx);
      await hooks?.beforeCommit?.(tx, done);
      const withCommit = hooks?.withCommit?.(tx, done);
      if (withCommit) sendWithCommit(withCommit);
      committing = true;
      return done;
    });
    // A statement sent with the COMMIT failed: the server rolled the transaction back instead.
    for (const sent of sentWithCommit) await sent;
    if (eventCtx.failures.length > 0) ctx.onRuleFailures?.(eventCtx.failures);
    return result;
  } catch (caught) {
    // A statement sent ahead failed and a later one, awaited, then failed as the aborted
    // transaction's: the first failure is the operation's (a Conflict, not "transaction aborted").
    const error = (await firstFailure(sentWithCommit)) ?? caught;
    if (error instanceof RulesRejectedEvent) {
      await recordRuleFailures(db, error.failures, new Date(ctx.clock()));
      ctx.onRuleFailures?.(error.failures);
    }
    // Every statement succeeded and only the COMMIT went unanswered: the event may be stored.
    if (committing && isDatabaseUnavailable(error)) throw new CommitOutcomeUnknown(error);
    throw error;
  }
}

/** The first of `sent` to have failed, once all settled; undefined when none did. */
async function firstFailure(sent: readonly Promise<unknown>[]): Promise<unknown> {
  for (const outcome of await Promise.allSettled(sent)) if (outcome.status === "rejected") return outcome.reason;
  return undefined;
}

/**
 * The work's result once a pipelined begin hook settled too: the hook's failure first (the work's
 * own is then only the aborted transaction's), else the work's.
 */
async function workAfter<T>(begun: Promise<void>, work: Promise<T>): Promise<T> {
  const [hook, done] = await Promise.allSettled([begun, work]);
  if (hook.status === "rejected") throw hook.reason;
  if (done.status === "rejected") throw done.reason;
  return done.value;
}
