import { randomBytes } from "node:crypto";
import { and, asc, count, eq } from "drizzle-orm";
import { userAttributes, users, type Database } from "@studyflow/db";
import { Conflict, Invalid, NotFound } from "../errors";

/** Longest attribute type taken: a name the app chooses, not data. */
export const MAX_USER_ATTRIBUTE_TYPE_LENGTH = 100;
/** Largest attributes document taken, as JSON text: what an app keeps beside a profile, not files. */
export const MAX_USER_ATTRIBUTES_BYTES = 16 * 1024;
/** Types one account may hold; case-backend has no bound, so one account could grow without end. */
export const MAX_USER_ATTRIBUTE_TYPES = 50;

/** One attributes document of an account, as case-backend's UserAttributes holds it. */
export interface UserAttributeDocument {
  id: string;
  userId: string;
  type: string;
  attributes: Record<string, unknown> | null;
  /** When it was last written. */
  createdAt: Date;
}

/** The account's attribute documents, by type. */
export async function listUserAttributes(db: Database, userId: string): Promise<UserAttributeDocument[]> {
  return db
    .select({
      id: userAttributes.id,
      userId: userAttributes.userId,
      type: userAttributes.type,
      attributes: userAttributes.attributes,
      createdAt: userAttributes.createdAt,
    })
    .from(userAttributes)
    .where(eq(userAttributes.userId, userId))
    .orderBy(asc(userAttributes.type));
}

/**
 * Creates or replaces the account's document of one type (case-backend's SetUserAttribute: an
 * upsert by account and type whose write time is now). The account's row is locked, so two
 * writes of new types cannot both pass the bound on types.
 */
export async function setUserAttribute(
  db: Database,
  userId: string,
  input: { type: string; attributes: Record<string, unknown> | null },
  now: Date,
): Promise<void> {
  const type = input.type;
  if (type.trim() === "") throw new Invalid("type is required");
  if (type.length > MAX_USER_ATTRIBUTE_TYPE_LENGTH) {
    throw new Invalid(`type is longer than ${MAX_USER_ATTRIBUTE_TYPE_LENGTH} characters`);
  }
  if (Buffer.byteLength(JSON.stringify(input.attributes ?? null), "utf8") > MAX_USER_ATTRIBUTES_BYTES) {
    throw new Invalid(`attributes is larger than ${MAX_USER_ATTRIBUTES_BYTES} bytes of JSON`);
  }
  await db.transaction(async (tx) => {
    const [account] = await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for("update");
    if (!account) throw new NotFound("account not found");
    const [existing] = await tx
      .select({ id: userAttributes.id })
      .from(userAttributes)
      .where(and(eq(userAttributes.userId, userId), eq(userAttributes.type, type)))
      .limit(1);
    if (existing) {
      await tx
        .update(userAttributes)
        .set({ attributes: input.attributes, createdAt: now })
        .where(eq(userAttributes.id, existing.id));
      return;
    }
    const [held] = await tx.select({ n: count() }).from(userAttributes).where(eq(userAttributes.userId, userId));
    if ((held?.n ?? 0) >= MAX_USER_ATTRIBUTE_TYPES) {
      throw new Conflict(`an account holds at most ${MAX_USER_ATTRIBUTE_TYPES} attribute types; delete one first`);
    }
    await tx.insert(userAttributes).values({
      id: randomBytes(12).toString("hex"),
      userId,
      type,
      attributes: input.attributes,
      createdAt: now,
    });
  });
}

/** Deletes one of the account's documents; NotFound for an unknown id and for another account's. */
export async function deleteUserAttribute(db: Database, userId: string, attributeId: string): Promise<void> {
  const deleted = await db
    .delete(userAttributes)
    .where(and(eq(userAttributes.id, attributeId), eq(userAttributes.userId, userId)))
    .returning({ id: userAttributes.id });
  if (deleted.length === 0) throw new NotFound(`user attribute "${attributeId.slice(0, 100)}" not found`);
}
