import { and, eq, inArray } from "drizzle-orm";
import { profiles, type Executor } from "@studyflow/db";
import { Forbidden } from "../errors";

/**
 * Checks that every profile id is one of the user's own profiles, in one read, before anything of
 * theirs is read: one stranger's id among many refuses the whole request (case-backend's
 * checkAllProfilesBelongsToUser). Returns the ids without repeats, in the order given.
 * @throws Forbidden naming no profile (which of them is not the user's is nobody's business).
 */
export async function assertProfilesOfUser(
  db: Executor,
  userId: string,
  profileIds: readonly string[],
): Promise<string[]> {
  const unique = [...new Set(profileIds)];
  if (unique.length === 0) return [];
  const owned = await db
    .select({ id: profiles.id })
    .from(profiles)
    .where(and(eq(profiles.userId, userId), inArray(profiles.id, unique)));
  if (owned.length !== unique.length) {
    throw new Forbidden("at least one profile does not belong to the signed-in user");
  }
  return unique;
}
