import { eq } from "drizzle-orm";
import { tokenRevocations, type Executor } from "@studyflow/db";
import { forgetCached, readCacheOf } from "../cache/read-cache";

/** Ends every management token of `subjectId` issued before `at` (tokens minted later still work). */
export async function revokeSubjectTokens(db: Executor, subjectId: string, at: Date): Promise<void> {
  await db
    .insert(tokenRevocations)
    .values({ subjectId, revokedBefore: at })
    .onConflictDoUpdate({ target: tokenRevocations.subjectId, set: { revokedBefore: at } });
  forgetCached(db, "revocation", subjectId);
}

/**
 * Whether a token of `subjectId` issued at `issuedAtSeconds` was revoked. A token without an
 * issue time cannot be shown to postdate a revocation, so it counts as revoked when one exists.
 */
export async function isTokenRevoked(
  db: Executor,
  subjectId: string,
  issuedAtSeconds: number | undefined,
): Promise<boolean> {
  const load = async () => {
    const [row] = await db
      .select({ revokedBefore: tokenRevocations.revokedBefore })
      .from(tokenRevocations)
      .where(eq(tokenRevocations.subjectId, subjectId))
      .limit(1);
    return { revokedBefore: row?.revokedBefore.getTime() ?? null };
  };
  // "never revoked" is kept as well: a revocation is announced like any change
  const cache = readCacheOf(db);
  const { revokedBefore } = (cache ? await cache.get("revocation", subjectId, load) : undefined) ?? (await load());
  if (revokedBefore === null) return false;
  return issuedAtSeconds === undefined || issuedAtSeconds * 1000 < revokedBefore;
}
