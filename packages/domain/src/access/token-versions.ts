import { rawClientOf, type Executor } from "@studyflow/db";
import { readCacheOf } from "../cache/read-cache";

/**
 * The user's current participant-token version (a password reset bumps it and retires older
 * tokens), or undefined when the account no longer exists. Kept in the read cache for accounts
 * that exist; a reset is announced like any change of the row.
 */
export async function currentTokenVersion(db: Executor, userId: string): Promise<number | undefined> {
  const load = async () => {
    // prepared once per connection: a miss costs one round trip, where drizzle's describes first
    const [user] = await rawClientOf(db)<{ token_version: number }[]>`
      select token_version from users where id = ${userId} limit 1`;
    return user?.token_version;
  };
  const cache = readCacheOf(db);
  return cache ? cache.get("user", userId, load) : load();
}
