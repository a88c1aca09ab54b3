import { createHash, randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { profiles, users, type Database, type Executor } from "@studyflow/db";
import { hashPassword } from "../participant-accounts/passwords";
import { normalizeEmail } from "../participant-accounts/password-reset";
import { Unauthorized } from "../errors";
import { mainProfileValues } from "../participant-accounts/main-profile";

/** Who an external OpenID provider says the caller is, from a verified token. */
export interface ExternalIdentity {
  /** The provider's issuer (the token's `iss`). */
  issuer: string;
  /** The account at the provider (the token's `sub`). */
  subject: string;
  /** The token's `email`, when the provider vouches for it (`email_verified: true`); else absent. */
  verifiedEmail?: string;
}

export interface ExternalUser {
  userId: string;
  /** Whether this call created the account (first use of the identity). */
  created: boolean;
}

const emailSchema = z.email().max(254);

/**
 * The sign-in address of an account kept elsewhere whose e-mail studyflow does not know (none
 * given, not verified, or another account's already): unique per identity, in a domain that can
 * never receive mail (RFC 2606's `.invalid`), so the outbox never reaches a stranger.
 */
function placeholderEmail(identity: ExternalIdentity): string {
  const digest = createHash("sha256").update(`${identity.issuer}\n${identity.subject}`, "utf8").digest("hex");
  return `external-${digest.slice(0, 40)}@external.invalid`;
}

async function findExternalUser(db: Executor, identity: ExternalIdentity) {
  const [row] = await db
    .select({ id: users.id, lockedAt: users.lockedAt, deletionRequestedAt: users.deletionRequestedAt })
    .from(users)
    .where(and(eq(users.externalIssuer, identity.issuer), eq(users.externalSubject, identity.subject)));
  return row;
}

function usable(row: { id: string; lockedAt: Date | null; deletionRequestedAt: Date | null }): string {
  if (row.lockedAt) throw new Unauthorized("account locked");
  if (row.deletionRequestedAt) throw new Unauthorized("account no longer exists");
  return row.id;
}

/**
 * The studyflow user of an external identity, created on its first use with a main profile, in
 * one transaction. Its password hash is of 32 random bytes nobody holds: such an account signs in
 * only through its provider. The provider's verified e-mail becomes the account's address when no
 * other account has it (an address is never taken over from an existing account: that would hand
 * the account to whoever controls the provider's claim); otherwise a placeholder that receives no
 * mail. Two first requests at once create one user: the unique index on (issuer, subject) makes
 * the second insert wait for the first and then find its row.
 */
export async function userForExternalIdentity(
  db: Database,
  identity: ExternalIdentity,
  now: Date,
): Promise<ExternalUser> {
  const existing = await findExternalUser(db, identity);
  if (existing) return { userId: usable(existing), created: false };

  const passwordHash = await hashPassword(randomBytes(32).toString("base64url"));
  const email =
    identity.verifiedEmail !== undefined && emailSchema.safeParse(identity.verifiedEmail.trim()).success
      ? normalizeEmail(identity.verifiedEmail)
      : undefined;
  return db.transaction(async (tx) => {
    const insert = (address: string, confirmed: boolean) =>
      tx
        .insert(users)
        .values({
          email: address,
          passwordHash,
          externalIssuer: identity.issuer,
          externalSubject: identity.subject,
          accountConfirmedAt: confirmed ? now : null,
        })
        .onConflictDoNothing()
        .returning({ id: users.id });
    let [created] = email ? await insert(email, true) : [];
    if (!created) {
      // a concurrent first request created the identity's user (this insert waited for it) …
      const raced = await findExternalUser(tx, identity);
      if (raced) return { userId: usable(raced), created: false };
      // … or the address belongs to another account
      [created] = await insert(placeholderEmail(identity), false);
    }
    if (!created) {
      const raced = await findExternalUser(tx, identity);
      if (raced) return { userId: usable(raced), created: false };
      throw new Error("external user insert returned nothing");
    }
    // an account without a usable address has nothing to blur: its placeholder is no one's name
    await tx.insert(profiles).values(mainProfileValues(created.id, email ?? "", now, email ? undefined : "main"));
    return { userId: created.id, created: true };
  });
}
