import { createHash, randomBytes, randomUUID } from "node:crypto";
import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys, serviceAccounts, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { forgetCached, readCacheOf } from "../cache/read-cache";
import { Conflict, Invalid, NotFound, Unauthorized } from "../errors";
import { NO_REVEAL_COPY, apiKeyRevealCopy, takeApiKeyReveals, type ApiKeyReader } from "./api-key-reveal";
import type { SecretBox } from "./secret-box";

/**
 * Service accounts: machines calling the management API with an API key instead of a token. A
 * key acts as its subject, whose permissions are granted as for a person; it is never admin. The
 * key is shown once, to its creator; only its SHA-256 is kept for good (api-key-reveal.ts: the
 * short-lived sealed copy of a key made through the API, for case-admin's key list).
 */

/** Marks a studyflow key, so a leaked one is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = "sf_";
/** 256 random bits: guessing is hopeless, so neither a slow hash nor a rate limit is needed. */
const KEY_BYTES = 32;
/** `sf_` and the base64url of 32 bytes (43 characters, no padding). */
const KEY_PATTERN = /^sf_[A-Za-z0-9_-]{43}$/;

/**
 * A key a CASE deployment handed out (case-backend's token strings: 24 bytes, 18 of them random,
 * in lowercase base32), carried over by import:case so the machines holding one keep working.
 * 144 random bits leave nothing to guess, so its SHA-256 serves as it does for our own keys.
 */
const CASE_KEY_PATTERN = /^[a-z2-7]{39}$/;

/** Whether `key` has the form of a key case-backend made. */
export const isCaseApiKey = (key: string): boolean => CASE_KEY_PATTERN.test(key);
/** Shown in lists to tell keys apart: 8 characters (48 bits) of the 256, too few to use or guess the key. */
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** @defaultValue lifetime of a key created without an expiry. */
export const DEFAULT_API_KEY_DAYS = 90;
/** Longest lifetime: a yearly rotation with a month's overlap; a forgotten key still dies. */
export const MAX_API_KEY_DAYS = 400;
/**
 * `last_used_at` is written at most once a minute per key: a busy machine caller would otherwise
 * write the row on every request, and "last used" is read by people, who need no finer time.
 */
const LAST_USED_RESOLUTION_MS = 60_000;
const DAY_MS = 86_400_000;

const MAX_SUBJECT_LENGTH = 200;
const MAX_LABEL_LENGTH = 200;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A stored key, without its hash, its sealed copy and its service account (the account's own routes show that). */
export type ApiKey = Omit<typeof apiKeys.$inferSelect, "keyHash" | "serviceAccountId" | "revealSealed" | "revealUntil">;
export type ApiKeyStatus = "active" | "expired" | "revoked";

export interface CreateApiKeyInput {
  /** The management subject the key authenticates as. */
  subject: string;
  label?: string;
  /** Lifetime in whole days, 1 to MAX_API_KEY_DAYS; give this or `expiresAt`, not both. */
  expiresInDays?: number;
  /** End of the key's life; at most MAX_API_KEY_DAYS from now. */
  expiresAt?: Date;
  /** Who created it (recorded on the key and in the audit log). */
  createdBy: string;
  now: Date;
}

export interface CreatedApiKey {
  /** The key itself: shown this once, never stored. */
  key: string;
  apiKey: ApiKey;
}

/** Who a valid key authenticates as. */
export interface ApiKeySubject {
  subject: string;
  keyId: string;
  /** The service account the key belongs to (its permissions are of subject type `service-account`); null for older keys. */
  serviceAccountId: string | null;
}

export type ApiKeyRejection = "invalid" | "expired" | "revoked";

/** A key that does not authenticate; the message says which of the three reasons applies. */
export class ApiKeyRejected extends Unauthorized {
  constructor(readonly reason: ApiKeyRejection) {
    super(`${reason} api key`);
  }
}

/**
 * SHA-256 hex of a key. A fast hash is right here, unlike for passwords: the key is 256 random
 * bits, so there is no dictionary to try, and a slow hash would only cost every request.
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

const withoutHash = ({
  keyHash: _hash,
  serviceAccountId: _account,
  revealSealed: _sealed,
  revealUntil: _until,
  ...key
}: typeof apiKeys.$inferSelect): ApiKey => key;

function expiryOf(input: Pick<CreateApiKeyInput, "expiresAt" | "expiresInDays">, now: Date): Date {
  if (input.expiresAt !== undefined && input.expiresInDays !== undefined) {
    throw new Invalid("give the key's lifetime in days or its expiry date, not both");
  }
  const latest = now.getTime() + MAX_API_KEY_DAYS * DAY_MS;
  if (input.expiresAt !== undefined) {
    const at = input.expiresAt.getTime();
    if (Number.isNaN(at)) throw new Invalid("expiry is not a valid date");
    if (at <= now.getTime()) throw new Invalid("expiry must be in the future");
    if (at > latest) throw new Invalid(`expiry must be at most ${MAX_API_KEY_DAYS} days away`);
    return input.expiresAt;
  }
  const days = input.expiresInDays ?? DEFAULT_API_KEY_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_API_KEY_DAYS) {
    throw new Invalid(`lifetime must be a whole number of days from 1 to ${MAX_API_KEY_DAYS}, got ${days}`);
  }
  return new Date(now.getTime() + days * DAY_MS);
}

function checkedLength(value: string, name: string, maxLength: number): string {
  if (value.length > maxLength) throw new Invalid(`${name} is longer than ${maxLength} characters`);
  return value;
}

/** Creates a key for `subject` and returns it, the one time it is ever shown. */
export async function createApiKey(db: Database, input: CreateApiKeyInput): Promise<CreatedApiKey> {
  const { now } = input;
  // The subject is kept as given: it must equal the subject of its permission grants exactly.
  if (input.subject.trim() === "") throw new Invalid("subject must not be empty");
  const subject = checkedLength(input.subject, "subject", MAX_SUBJECT_LENGTH);
  const label = checkedLength(input.label?.trim() ?? "", "label", MAX_LABEL_LENGTH);
  const expiresAt = expiryOf(input, now);
  const key = `${API_KEY_PREFIX}${randomBytes(KEY_BYTES).toString("base64url")}`;
  const keyPrefix = key.slice(0, SHOWN_PREFIX_LENGTH);
  const row = await db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(apiKeys)
      .values({
        subject,
        label,
        keyHash: hashApiKey(key),
        keyPrefix,
        createdBy: input.createdBy,
        createdAt: now,
        expiresAt,
      })
      .returning();
    if (!inserted) throw new Error("api key insert returned nothing");
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: input.createdBy,
        action: "service-key.create",
        target: inserted.id,
        details: { subject, label, keyPrefix, expiresAt: expiresAt.toISOString() },
      },
      now,
    );
    return inserted;
  });
  return { key, apiKey: withoutHash(row) };
}

/** Keys, most recent first; without secrets (the hash stays in the database). */
export async function listApiKeys(db: Executor, filter: { subject?: string } = {}): Promise<ApiKey[]> {
  const rows = await db
    .select()
    .from(apiKeys)
    .where(filter.subject === undefined ? undefined : eq(apiKeys.subject, filter.subject))
    .orderBy(desc(apiKeys.createdAt), apiKeys.id);
  return rows.map(withoutHash);
}

export function apiKeyStatus(key: Pick<ApiKey, "expiresAt" | "revokedAt">, now: Date): ApiKeyStatus {
  if (key.revokedAt) return "revoked";
  return key.expiresAt.getTime() <= now.getTime() ? "expired" : "active";
}

/** Ends a key at once. Revoking it twice is a Conflict: the first revocation stands. */
export async function revokeApiKey(db: Database, id: string, by: string, now: Date): Promise<ApiKey> {
  if (!UUID_PATTERN.test(id)) throw new NotFound(`no api key "${id}"`);
  const revokedKey = await db.transaction(async (tx) => {
    const [revoked] = await tx
      .update(apiKeys)
      .set({ revokedAt: now, ...NO_REVEAL_COPY })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning();
    if (!revoked) {
      const [existing] = await tx
        .select({ revokedAt: apiKeys.revokedAt })
        .from(apiKeys)
        .where(eq(apiKeys.id, id))
        .limit(1);
      if (!existing) throw new NotFound(`no api key "${id}"`);
      throw new Conflict(`api key "${id}" was already revoked at ${existing.revokedAt?.toISOString() ?? "?"}`);
    }
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "service-key.revoke",
        target: id,
        details: { subject: revoked.subject, keyPrefix: revoked.keyPrefix },
      },
      now,
    );
    return revoked;
  });
  forgetCached(db, "api-key", revokedKey.keyHash);
  return withoutHash(revokedKey);
}

/**
 * The subject of a valid key, or ApiKeyRejected. The key is found by its hash through the unique
 * index, so no secret is compared in code: what a lookup's timing could tell is about the hash,
 * which says nothing about keys an attacker does not already have.
 */
export async function verifyApiKey(db: Executor, key: string, now: Date): Promise<ApiKeySubject> {
  // A string that cannot be a key is refused without a query.
  if (!KEY_PATTERN.test(key) && !isCaseApiKey(key)) throw new ApiKeyRejected("invalid");
  const keyHash = hashApiKey(key);
  const load = async () => {
    const [found] = await db
      .select({
        id: apiKeys.id,
        subject: apiKeys.subject,
        serviceAccountId: apiKeys.serviceAccountId,
        expiresAt: apiKeys.expiresAt,
        revokedAt: apiKeys.revokedAt,
        lastUsedAt: apiKeys.lastUsedAt,
      })
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, keyHash))
      .limit(1);
    return found;
  };
  // Kept by hash (only keys that exist); a revocation is announced, and expiry is checked on every use.
  const cache = readCacheOf(db);
  const row = cache ? await cache.get("api-key", keyHash, load) : await load();
  if (!row) throw new ApiKeyRejected("invalid");
  const status = apiKeyStatus(row, now);
  if (status !== "active") throw new ApiKeyRejected(status);
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  if (!row.lastUsedAt || row.lastUsedAt < staleBefore) {
    // Noted in the kept row first, so concurrent requests of this process do not all write.
    row.lastUsedAt = now;
    // The condition again in SQL: of concurrent requests that all saw a stale time, one writes.
    await db
      .update(apiKeys)
      .set({ lastUsedAt: now })
      .where(and(eq(apiKeys.id, row.id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore))));
  }
  return { subject: row.subject, keyId: row.id, serviceAccountId: row.serviceAccountId ?? null };
}

/** A service account's key as its list shows it: a hint to tell keys apart, or the key the one time its creator sees it. */
export interface ServiceAccountApiKey extends ApiKey {
  serviceAccountId: string;
  /** The key's shown prefix and "…" (apiKeyHint), too little to use or guess the key; or, when `revealed`, the key. */
  key: string;
  /** True when `key` is the whole key: the answer that creates it, or its creator's first list. */
  revealed: boolean;
}

/** How lists show a key: its first characters and "…", in the field where case-admin shows a key. */
export const apiKeyHint = (keyPrefix: string) => `${keyPrefix}…`;

export interface CreateServiceAccountApiKeyInput {
  serviceAccountId: string;
  /** End of the key's life; absent: DEFAULT_API_KEY_DAYS from now. At most MAX_API_KEY_DAYS away. */
  expiresAt?: Date;
  label?: string;
  createdBy: string;
  now: Date;
  /**
   * Seals a copy for the creator's first key list (API_KEY_REVEAL_WINDOW_MS): the API passes its
   * MANAGEMENT_SECRETS_KEY box, since case-admin shows a new key only from that list. Absent (the
   * CLI, which prints the key): nothing but the hash is kept.
   */
  revealBox?: SecretBox | undefined;
}

/**
 * Creates a key of a service account (subject = the account's id) and returns it. Only its
 * SHA-256 and its prefix are kept for good, so neither an admin nor anyone reading the database
 * can see it again once its creator has (a lost key is replaced, not recovered); with `revealBox`,
 * a sealed copy waits minutes at most for the creator's first list. An unknown account is Invalid,
 * as case-backend answers it (400).
 */
export async function createServiceAccountApiKey(
  db: Database,
  input: CreateServiceAccountApiKeyInput,
): Promise<CreatedApiKey & { apiKey: ServiceAccountApiKey }> {
  const { now } = input;
  const label = checkedLength(input.label?.trim() ?? "", "label", MAX_LABEL_LENGTH);
  let expiresAt: Date;
  try {
    expiresAt = expiryOf(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }, now);
  } catch (error) {
    if (error instanceof Invalid) throw new Invalid(`expiresAt: ${error.message}`);
    throw error;
  }
  const id = randomUUID();
  const key = `${API_KEY_PREFIX}${randomBytes(KEY_BYTES).toString("base64url")}`;
  const keyPrefix = key.slice(0, SHOWN_PREFIX_LENGTH);
  const row = await db.transaction(async (tx) => {
    const [account] = UUID_PATTERN.test(input.serviceAccountId)
      ? await tx
          .select({ id: serviceAccounts.id })
          .from(serviceAccounts)
          .where(eq(serviceAccounts.id, input.serviceAccountId))
          .for("share")
          .limit(1)
      : [];
    if (!account) throw new Invalid("service account not found");
    const [inserted] = await tx
      .insert(apiKeys)
      .values({
        id,
        subject: account.id,
        serviceAccountId: account.id,
        label,
        keyHash: hashApiKey(key),
        keyPrefix,
        createdBy: input.createdBy,
        createdAt: now,
        expiresAt,
        ...apiKeyRevealCopy(input.revealBox, { id, key, createdBy: input.createdBy }, now),
      })
      .returning();
    if (!inserted) throw new Error("api key insert returned nothing");
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: input.createdBy,
        action: "api-key.create",
        target: inserted.id,
        details: {
          serviceAccountId: account.id,
          keyPrefix,
          expiresAt: expiresAt.toISOString(),
          ...(inserted.revealUntil ? { revealUntil: inserted.revealUntil.toISOString() } : {}),
        },
      },
      now,
    );
    return inserted;
  });
  return { key, apiKey: { ...withoutHash(row), serviceAccountId: accountOf(row), key, revealed: true } };
}

const accountOf = (row: typeof apiKeys.$inferSelect): string => row.serviceAccountId ?? row.subject;

/**
 * A service account's keys, newest first, each shown by its hint. With `reader` (the API's list),
 * a key the reader created within API_KEY_REVEAL_WINDOW_MS and has not listed since is shown whole,
 * once: its sealed copy is erased in the same transaction, with every copy past its window
 * (takeApiKeyReveals); the reveal is audited. Without `reader` (the CLI) nothing is shown or erased.
 */
export async function listServiceAccountApiKeys(
  db: Database,
  serviceAccountId: string,
  reader?: ApiKeyReader,
): Promise<ServiceAccountApiKey[]> {
  if (!UUID_PATTERN.test(serviceAccountId)) throw new NotFound(`no service account "${serviceAccountId}"`);
  return db.transaction(async (tx) => {
    const [found] = await tx
      .select({ id: serviceAccounts.id })
      .from(serviceAccounts)
      .where(eq(serviceAccounts.id, serviceAccountId))
      .limit(1);
    if (!found) throw new NotFound(`no service account "${serviceAccountId}"`);
    const shown = reader ? await takeApiKeyReveals(tx, serviceAccountId, reader) : new Map<string, string>();
    const rows = await tx
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.serviceAccountId, serviceAccountId))
      .orderBy(desc(apiKeys.createdAt), apiKeys.id);
    return rows.map((row) => {
      const key = shown.get(row.id);
      return {
        ...withoutHash(row),
        serviceAccountId: accountOf(row),
        key: key ?? apiKeyHint(row.keyPrefix),
        revealed: key !== undefined,
      };
    });
  });
}

/** Deletes one key of a service account (NotFound when it is not this account's); it stops working at once. */
export async function deleteServiceAccountApiKey(
  db: Database,
  serviceAccountId: string,
  keyId: string,
  by: string,
  now: Date,
): Promise<void> {
  if (!UUID_PATTERN.test(serviceAccountId) || !UUID_PATTERN.test(keyId)) {
    throw new NotFound(`the service account has no api key "${keyId}"`);
  }
  const removed = await db.transaction(async (tx) => {
    const [row] = await tx
      .delete(apiKeys)
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.serviceAccountId, serviceAccountId)))
      .returning();
    if (!row) throw new NotFound(`the service account has no api key "${keyId}"`);
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "api-key.delete",
        target: keyId,
        details: { serviceAccountId, keyPrefix: row.keyPrefix },
      },
      now,
    );
    return row;
  });
  forgetCached(db, "api-key", removed.keyHash);
}
