import { eq } from "drizzle-orm";
import { users, type Executor } from "@studyflow/db";
import { readCacheOf } from "../cache/read-cache";

/**
 * The user's current participant-token version (a password reset bumps it and retires older
 * tokens), or undefined when the account no longer exists. Kept in the read cache for accounts
 * that exist; a reset is announced like any change of the row.
 */
export async function currentTokenVersion(db: Executor, userId: string): Promise<number | undefined> {
  const load = async () => {
    const [user] = await db
      .select({ tokenVersion: users.tokenVersion })
      .from(users)
      .where(eq(users.id, userId))
      .limit(1);
    return user?.tokenVersion;
  };
  const cache = readCacheOf(db);
  return cache ? cache.get("user", userId, load) : load();
}
