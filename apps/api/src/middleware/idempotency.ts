import { createHash } from "node:crypto";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { Invalid, Unauthorized } from "@studyflow/domain/errors";
import { type DomainContext } from "@studyflow/domain/events";
import {
  IdempotencyKeyTaken,
  findIdempotencyRecord,
  idempotencyTransactionHooks,
  requestFingerprint,
  type IdempotencyClaim,
  type IdempotencyRecord,
} from "@studyflow/domain/idempotency";
import type { AppEnv } from "../app-env";
import type { AppDeps } from "../deps";
import { domainContext } from "../domain-context";
import { headersCheckedByMiddleware } from "./checked-headers";
import { requestJson } from "../request-json";

// Safe retries: a client that sends `Idempotency-Key: <its own unique value>` with a write may send
// the same request again (a dropped connection, a timeout) and gets the first answer back, with
// nothing written twice.
//
// - Keys are per caller (the participant's user, the management subject): two callers' equal keys
//   never meet.
// - The same key with the same request (method, path, body with its keys in any order) answers the
//   first answer (its status and body) with `Idempotent-Replayed: true`; with another request, 422.
//   A retry passes the route's own checks (token, profile ownership, permission) again first.
// - Concurrent requests with one key: exactly one runs, the others WAIT for it (not 409) and then
//   answer as a retry would. The waiting is Postgres' own: the key's row is inserted first in the
//   event's transaction, and an insert of the same key waits on the unique index until that
//   transaction ends. A waiting request holds a pool connection meanwhile; a client that fires the
//   same request many times at once (it should not) ties up connections only for one event's time.
// - The key's record commits in the event's transaction (DomainContext.transactionHooks), so there
//   is no moment in which the event is stored and the key is not, or the reverse. A request that
//   fails (validation, 4xx from the domain, rules rejected, 5xx) rolls back its claim: the key stays
//   free for a retry.
// - Records live a day (IDEMPOTENCY_KEY_TTL_MS); the worker's maintenance removes older ones.
//
// Use: `middleware: [idempotencyKey()]` on the route (after the body reader and the auth), and
// `answerOnce(c, deps, (ctx) => domainOperation(..., ctx), present)` in its handler.

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";

const keyValue = z
  .string()
  .min(1, `${IDEMPOTENCY_KEY_HEADER} must not be empty`)
  .max(255, `${IDEMPOTENCY_KEY_HEADER} is longer than 255 characters`)
  .regex(/^[\x20-\x7e]+$/, `${IDEMPOTENCY_KEY_HEADER} must be printable ASCII`);

/**
 * The header as createRoute documents it: `request: { headers: idempotencyKeyHeaders, … }`, with
 * idempotencyKey() among the route's middleware, which checks it (see checked-headers.ts).
 */
export const idempotencyKeyHeaders = headersCheckedByMiddleware(
  z.object({
    "idempotency-key": keyValue.optional().openapi({
      // named as the object key (Hono reads headers lower-cased; HTTP header names ignore case)
      param: { name: "idempotency-key", in: "header" },
      description:
        "Optional, a value unique to this write (e.g. a UUID), at most 255 printable ASCII characters. A retry " +
        "with the same key and the same request answers the first answer again (header " +
        `\`${IDEMPOTENT_REPLAYED_HEADER}: true\`) and stores nothing again; the same key with another request is a ` +
        "422. Keys are per caller and kept for 24 hours; a request that failed does not use up its key; " +
        "concurrent requests with one key wait for the first one's answer.",
      example: "5b0e7a3c-58d6-4c0e-9a53-6f0c2b8f1d42",
    }),
  }),
);

declare module "hono" {
  interface ContextVariableMap {
    /** Set by idempotencyKey() when the request carries a well-formed key. */
    idempotency?: IdempotencyClaim;
  }
}

/** Who the key belongs to: the signed-in participant's user, else the management subject. */
function defaultScope(c: Context<AppEnv>): string {
  const participant = c.get("participant");
  if (participant) return `participant:${participant.userId}`;
  const management = c.get("management");
  if (management) return `management:${management.subject}`;
  throw new Unauthorized();
}

async function requestBody(c: Context<AppEnv>): Promise<unknown> {
  const body = await requestJson(c);
  // not JSON: the route's validator answers it; the fingerprint takes the text
  return body.kind === "json" ? body.value : body.text;
}

export interface IdempotencyOptions {
  /** The caller the keys belong to, when it is not a participant or management principal (e.g. a temporary participant). */
  scope?: (c: Context<AppEnv>) => string | Promise<string>;
}

/**
 * The scope of a temporary participant's keys (temp-participant submit-response, no sign-in): the
 * study and the temporary participant the body names (`studyKey`, `pid`), hashed, since the id is
 * the participant's only secret. Use: `idempotencyKey({ scope: temporaryParticipantScope })`
 * after the body reader.
 */
export async function temporaryParticipantScope(c: Context<AppEnv>): Promise<string> {
  const body = (await requestBody(c)) as { studyKey?: unknown; pid?: unknown } | null;
  const studyKey = typeof body?.studyKey === "string" ? body.studyKey : "";
  const pid = typeof body?.pid === "string" ? body.pid : "";
  return `temporary:${createHash("sha256").update(`${studyKey}\n${pid}`, "utf8").digest("hex")}`;
}

/** The retry's answer: the first answer again, or 422 when the key was used for another request. */
function replay(c: Context<AppEnv>, claim: IdempotencyClaim, record: IdempotencyRecord) {
  if (record.requestHash !== claim.requestHash) {
    throw new HTTPException(422, {
      message: `${IDEMPOTENCY_KEY_HEADER} was already used for another request (${record.operation} with another path or body); use a new key`,
    });
  }
  c.header(IDEMPOTENT_REPLAYED_HEADER, "true");
  return record;
}

/**
 * Reads and checks the Idempotency-Key header (400 when malformed) and leaves the request's claim
 * (caller, key, fingerprint) for answerOnce. Without the header the request goes on as it is.
 */
export function idempotencyKey(options: IdempotencyOptions = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header(IDEMPOTENCY_KEY_HEADER);
    if (header === undefined) return next();
    const parsed = keyValue.safeParse(header);
    if (!parsed.success) throw new Invalid(parsed.error.issues[0]?.message ?? `invalid ${IDEMPOTENCY_KEY_HEADER}`);
    const claim: IdempotencyClaim = {
      scope: await (options.scope ?? defaultScope)(c),
      key: parsed.data,
      operation: `${c.req.method} ${c.req.routePath}`,
      requestHash: requestFingerprint(c.req.method, c.req.path, await requestBody(c)),
    };
    // No look-up here: the claim in the event's transaction finds an answered key (answerOnce
    // then replays it), and a first request, the common case, saves a round trip (see the bench).
    c.set("idempotency", claim);
    await next();
  });
}

/**
 * Runs a participant operation and answers 200 with `present(result)`. When the request claimed
 * an Idempotency-Key, the key's record (that same answer) commits in the operation's transaction;
 * a concurrent request with the same key that committed first answers this one instead.
 */
export async function answerOnce<T, B extends object>(
  c: Context<AppEnv>,
  deps: AppDeps,
  run: (ctx: DomainContext) => Promise<T>,
  present: (result: T) => B,
) {
  const ctx = domainContext(deps);
  const claim = c.get("idempotency");
  if (!claim) return c.json(present(await run(ctx)), 200);
  let body: B | undefined;
  const hooks = idempotencyTransactionHooks(claim, ctx.clock, (result) => {
    body = present(result as T);
    return { status: 200, body };
  });
  try {
    const result = await run({ ...ctx, transactionHooks: hooks });
    return c.json(body ?? present(result), 200);
  } catch (error) {
    if (!(error instanceof IdempotencyKeyTaken)) throw error;
    // A request with this key committed while this one waited: its answer is this one's.
    const record = await findIdempotencyRecord(deps.database.db, claim.scope, claim.key, ctx.clock());
    if (!record) throw error;
    return c.json(replay(c, claim, record).response as B, 200);
  }
}
