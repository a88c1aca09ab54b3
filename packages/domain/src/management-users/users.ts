import { eq, getTableColumns, sql } from "drizzle-orm";
import { managementUsers, type Executor } from "@studyflow/db";
import { readCacheOf } from "../cache/read-cache";

/** A management user's row (see packages/db/src/schema/management.ts). */
export type ManagementUser = typeof managementUsers.$inferSelect;

/** Management user ids are uuids; anything else names no row (and is refused without a query). */
export const MANAGEMENT_USER_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isManagementUserId = (value: string): boolean => MANAGEMENT_USER_ID_PATTERN.test(value);

/** What an identity provider's sign-in says about a person (case-admin's signin-with-idp body). */
export interface ManagementSignInProfile {
  provider: string;
  sub: string;
  email: string;
  username: string;
  imageUrl: string;
  /** Whether the provider's roles hold the admin role (MANAGEMENT_IDP_ADMIN_ROLE). */
  isAdmin: boolean;
}

/**
 * Creates the management user of (provider, sub), or updates it from the sign-in as case-backend
 * does (e-mail, name, picture, admin flag, last sign-in). One statement: two sign-ins of a new
 * person at once make one row.
 */
export async function upsertManagementUser(
  db: Executor,
  profile: ManagementSignInProfile,
  now: Date,
): Promise<{ user: ManagementUser; created: boolean }> {
  const [row] = await db
    .insert(managementUsers)
    .values({
      provider: profile.provider,
      sub: profile.sub,
      email: profile.email,
      username: profile.username,
      imageUrl: profile.imageUrl,
      isAdmin: profile.isAdmin,
      lastLoginAt: now,
      createdAt: now,
    })
    .onConflictDoUpdate({
      target: [managementUsers.provider, managementUsers.sub],
      set: {
        email: profile.email,
        username: profile.username,
        imageUrl: profile.imageUrl,
        isAdmin: profile.isAdmin,
        lastLoginAt: now,
      },
    })
    .returning({ ...getTableColumns(managementUsers), created: sql<boolean>`(xmax = 0)` });
  if (!row) throw new Error("management user upsert returned no row");
  const { created, ...user } = row;
  return { user, created };
}

/** The management user `id`, or null (a malformed id names none). */
export async function findManagementUser(db: Executor, id: string): Promise<ManagementUser | null> {
  if (!isManagementUserId(id)) return null;
  const [row] = await db.select().from(managementUsers).where(eq(managementUsers.id, id)).limit(1);
  return row ?? null;
}

/**
 * What a request of management user `id` needs of the row: whether it exists and is an admin.
 * Read through the read cache (the row's admin flag and its deletion are announced), so a
 * session token's request costs a map lookup. undefined: no such user.
 */
export async function managementUserStanding(db: Executor, id: string): Promise<{ isAdmin: boolean } | undefined> {
  if (!isManagementUserId(id)) return undefined;
  const load = async () => {
    const [row] = await db
      .select({ isAdmin: managementUsers.isAdmin })
      .from(managementUsers)
      .where(eq(managementUsers.id, id))
      .limit(1);
    return row ? { isAdmin: row.isAdmin } : undefined;
  };
  const cache = readCacheOf(db);
  return cache ? await cache.get("management-user", id, load) : await load();
}
