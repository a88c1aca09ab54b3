import { and, asc, eq, inArray, isNotNull, lte, or } from "drizzle-orm";
import { apiKeys, type Executor, type Transaction } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { sweepInBatches, type BatchedSweep } from "../foundation/batched-sweep";
import { SecretUnreadable, type SecretBox } from "./secret-box";

/**
 * A service-account key is shown to its creator once. The answer that creates it carries it; a
 * key made through the API is also kept sealed for the creator's first list of the account's keys,
 * because case-admin's "Generate new API key" dialog discards the creation's answer and shows and
 * copies the key only from the list it loads right after. That first list by the creator shows
 * the key and erases the copy in the same transaction; a list by anyone else shows the hint and
 * leaves the copy; a copy past its window is never shown and is erased (by any list of the
 * account's keys and by the hourly sweep).
 */

/**
 * How long the sealed copy waits for its creator's first list. case-admin loads the list in the
 * same page render as the creation, well within a second; ten minutes also covers a person whose
 * page was slow or who reloads it, while a copy nobody came for is gone long before the next
 * hourly sweep would matter.
 */
export const API_KEY_REVEAL_WINDOW_MS = 10 * 60_000;

/**
 * The sealing context: the key's row and its creator. A copy moved to another row, or taken for
 * another creator, does not open.
 */
export const apiKeyRevealContext = (keyId: string, createdBy: string) => `api-key-reveal:${keyId}:${createdBy}`;

/** The sealed copy and its window, for a new key's row; nothing when no box is configured (or the CLI made it). */
export function apiKeyRevealCopy(
  box: SecretBox | undefined,
  key: { id: string; key: string; createdBy: string },
  now: Date,
): { revealSealed: Buffer; revealUntil: Date } | Record<string, never> {
  if (!box) return {};
  return {
    revealSealed: box.seal(key.key, apiKeyRevealContext(key.id, key.createdBy)),
    revealUntil: new Date(now.getTime() + API_KEY_REVEAL_WINDOW_MS),
  };
}

/** Who lists a service account's keys: their first list after creating a key shows it. */
export interface ApiKeyReader {
  /** The management subject listing (compared with the key's `created_by`). */
  subject: string;
  /** The box that sealed the copies; without one, no copy opens (each is erased, the hint shown). */
  box: SecretBox | undefined;
  now: Date;
}

/**
 * In the list's transaction: the keys of `serviceAccountId` that `reader` created and may see now,
 * by key id. Every copy it looks at is erased in the same transaction, shown or not: the reader's
 * own (shown once), and anyone's past its window or on a revoked key (never shown). A copy of
 * another creator still in its window is not touched, so another admin's list does not take it.
 *
 * The copies are locked (FOR UPDATE) before they are read: of two lists by the creator at the
 * same time, the second waits for the first to commit, then finds the copy erased and shows the hint.
 */
export async function takeApiKeyReveals(
  tx: Transaction,
  serviceAccountId: string,
  reader: ApiKeyReader,
): Promise<Map<string, string>> {
  const held = await tx
    .select({
      id: apiKeys.id,
      createdBy: apiKeys.createdBy,
      keyPrefix: apiKeys.keyPrefix,
      revealSealed: apiKeys.revealSealed,
      revealUntil: apiKeys.revealUntil,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.serviceAccountId, serviceAccountId),
        isNotNull(apiKeys.revealSealed),
        or(eq(apiKeys.createdBy, reader.subject), lte(apiKeys.revealUntil, reader.now), isNotNull(apiKeys.revokedAt)),
      ),
    )
    // one order for every list, so two lists never lock the same rows in opposite orders
    .orderBy(asc(apiKeys.id))
    .for("update");
  const shown = new Map<string, string>();
  if (held.length === 0) return shown;
  for (const row of held) {
    const sealed = row.revealSealed;
    const inWindow = row.revealUntil !== null && row.revealUntil.getTime() > reader.now.getTime();
    if (sealed === null || !reader.box || row.createdBy !== reader.subject || row.revokedAt !== null || !inWindow) {
      continue;
    }
    let key: string;
    try {
      key = reader.box.open(sealed, apiKeyRevealContext(row.id, row.createdBy));
    } catch (error) {
      // sealed under a key no longer configured, or altered: erased below, the hint shown
      if (error instanceof SecretUnreadable) continue;
      throw error;
    }
    shown.set(row.id, key);
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: reader.subject,
        action: "api-key.reveal",
        target: row.id,
        details: { serviceAccountId, keyPrefix: row.keyPrefix },
      },
      reader.now,
    );
  }
  await tx
    .update(apiKeys)
    .set({ revealSealed: null, revealUntil: null })
    .where(
      inArray(
        apiKeys.id,
        held.map((row) => row.id),
      ),
    );
  return shown;
}

/**
 * Copies erased per statement. The rows are found through the partial index of rows holding a
 * copy, which only keys made in the last minutes are in; a round rarely finds more than a few.
 */
export const API_KEY_REVEAL_SWEEP_BATCH_SIZE = 1_000;

/**
 * Erases the sealed copies whose window has passed (`reveal_until` at or before `now`), whoever
 * created them: a copy its creator never came for stays no longer than until the next round. Such
 * a copy is never shown already (takeApiKeyReveals compares the window with the clock), so erasing
 * it changes no answer. Copies still in their window are never touched, nor locked ones (a list
 * taking them right now). Stops after `maxBatches` (the next round goes on).
 */
export async function sweepApiKeyRevealCopies(
  db: Executor,
  now: Date,
  options: { batchSize?: number; maxBatches?: number } = {},
): Promise<BatchedSweep> {
  return sweepInBatches(
    async (batchSize) => {
      const past = db
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .where(and(isNotNull(apiKeys.revealSealed), lte(apiKeys.revealUntil, now)))
        .limit(batchSize)
        .for("update", { skipLocked: true });
      const erased = await db
        .update(apiKeys)
        .set({ revealSealed: null, revealUntil: null })
        .where(and(inArray(apiKeys.id, past), isNotNull(apiKeys.revealSealed)))
        .returning({ id: apiKeys.id });
      return erased.length;
    },
    { batchSize: options.batchSize ?? API_KEY_REVEAL_SWEEP_BATCH_SIZE, maxBatches: options.maxBatches ?? 100 },
  );
}

/** Columns set on a revoked key: its copy goes with it (a revoked key is never shown). */
export const NO_REVEAL_COPY = { revealSealed: null, revealUntil: null } as const;
