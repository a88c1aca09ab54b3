import { and, count, eq } from "drizzle-orm";
import { profiles, users, type Executor, type Database } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import type { ProfileRow } from "./case-user";

/**
 * Profiles one account may hold, the main one included. case-backend's limit is 6 too
 * (MAX_PROFILES_ALLOWED), though its check (`len > 6`) lets a seventh in; studyflow stops at 6.
 */
export const MAX_PROFILES_PER_USER = 6;

/** What a participant sets on a profile; the id, the main flag and the creation time are the server's. */
export interface ProfileChanges {
  alias?: string;
  avatarId?: string;
  /** Unix seconds; 0 clears it (CASE's "never"). */
  consentConfirmedAt?: number;
}

const instantOf = (seconds: number): Date | null => (seconds > 0 ? new Date(seconds * 1000) : null);

function columnsOf(changes: ProfileChanges) {
  return {
    ...(changes.alias === undefined ? {} : { alias: changes.alias }),
    ...(changes.avatarId === undefined ? {} : { avatarId: changes.avatarId }),
    ...(changes.consentConfirmedAt === undefined ? {} : { consentConfirmedAt: instantOf(changes.consentConfirmedAt) }),
  };
}

/**
 * Adds a profile to the account; never a main one (the account's first profile is, from sign-up).
 * The user's row is locked first, so two concurrent additions cannot both pass the limit.
 */
export async function addProfile(db: Database, userId: string, changes: ProfileChanges): Promise<ProfileRow> {
  return db.transaction(async (tx) => {
    const [user] = await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for("update");
    if (!user) throw new NotFound("account not found");
    const [held] = await tx.select({ n: count() }).from(profiles).where(eq(profiles.userId, userId));
    if ((held?.n ?? 0) >= MAX_PROFILES_PER_USER) {
      throw new Conflict(`an account holds at most ${MAX_PROFILES_PER_USER} profiles`);
    }
    const [created] = await tx
      .insert(profiles)
      .values({ userId, mainProfile: false, ...columnsOf(changes) })
      .returning();
    if (!created) throw new Error("profile insert returned nothing");
    return created;
  });
}

/** The profile with this id if the user holds it; NotFound otherwise (another user's reads the same). */
export async function profileOfUser(
  db: Executor,
  userId: string,
  profileId: string,
  lock = false,
): Promise<ProfileRow> {
  const query = db
    .select()
    .from(profiles)
    .where(and(eq(profiles.id, profileId), eq(profiles.userId, userId)))
    .limit(1);
  const [row] = lock ? await query.for("update") : await query;
  if (!row) throw new NotFound("profile not found");
  return row;
}

/** Changes alias, avatar or consent of one of the user's profiles; whether it is the main one stays. */
export async function updateProfile(
  db: Executor,
  userId: string,
  profileId: string,
  changes: ProfileChanges,
): Promise<ProfileRow> {
  const set = columnsOf(changes);
  if (Object.keys(set).length === 0) return profileOfUser(db, userId, profileId);
  const [row] = await db
    .update(profiles)
    .set(set)
    .where(and(eq(profiles.id, profileId), eq(profiles.userId, userId)))
    .returning();
  if (!row) throw new NotFound("profile not found");
  return row;
}
