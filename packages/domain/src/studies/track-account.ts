import { eq, sql } from "drizzle-orm";
import { studies, type Database } from "@studyflow/db";
import { NotFound } from "../errors";

/**
 * Sets the flag when given; an absent value leaves it as it is. Returns the resulting value.
 */
export async function updateTrackAccount(db: Database, studyKey: string, trackAccount: boolean | undefined) {
  const [row] = await db
    .update(studies)
    .set(
      trackAccount === undefined
        ? { trackAccount: sql`${studies.trackAccount}` }
        : { trackAccount, updatedAt: new Date() },
    )
    .where(eq(studies.key, studyKey))
    .returning({ trackAccount: studies.trackAccount });
  if (!row) throw new NotFound(`study "${studyKey}" not found`);
  return row.trackAccount;
}
