import { eq } from "drizzle-orm";
import { outgoingMessages, users, type Database } from "@studyflow/db";
import { accountTokenLink, createAccountToken, linkValidForHours, retireAccountTokens } from "./account-tokens";
import { normalizeEmail } from "./password-reset";
import { Invalid } from "../errors";
import { accountForPasswordCheck, assertCurrentPassword } from "./change-password";

/** How long the link to confirm a new address works: a day, as studyflow's other mailed links. */
export const EMAIL_CHANGE_TOKEN_TTL_SECONDS = 86_400;

export interface RequestEmailChangeInput {
  userId: string;
  newEmail: string;
  password: string;
  now: Date;
  /** Page that receives the token as `?token=…` and posts it to POST /v1/auth/verify-email. */
  verifyUrl: string;
  /** @defaultValue EMAIL_CHANGE_TOKEN_TTL_SECONDS */
  ttlSeconds?: number;
}

/**
 * Asks to move the account to another address. Unlike case-backend, which switches the address at
 * once and asks to confirm it afterwards, nothing changes until the new address is proven: a
 * `change-email` token (info.newEmail) is mailed there as a link, and verify-email swaps the
 * address when it is used. The current address, if confirmed, gets a notice (as case-backend
 * sends one). An address another account holds is not disclosed: the caller answers the same,
 * and no link goes out (it could never be used). Earlier change links stop working.
 *
 * Returns the token for tests and operator tools only (null when no link was sent); the HTTP API
 * never reveals it.
 */
export async function requestEmailChange(
  db: Database,
  input: RequestEmailChangeInput,
): Promise<{ token: string | null }> {
  const newEmail = normalizeEmail(input.newEmail);
  const user = await accountForPasswordCheck(db, input.userId);
  if (newEmail === user.email) throw new Invalid("email: this is already the account's address");
  await assertCurrentPassword(user.passwordHash, input.password);

  return db.transaction(async (tx) => {
    await retireAccountTokens(tx, user.id, ["change-email"], input.now);
    const [holder] = await tx.select({ id: users.id }).from(users).where(eq(users.email, newEmail)).limit(1);
    if (holder) return { token: null };

    const ttlSeconds = input.ttlSeconds ?? EMAIL_CHANGE_TOKEN_TTL_SECONDS;
    const token = await createAccountToken(tx, {
      userId: user.id,
      purpose: "change-email",
      ttlSeconds,
      now: input.now,
      info: { newEmail },
    });
    // Written with the token: either both exist or neither.
    await tx.insert(outgoingMessages).values({
      template: "email-change-verify",
      toAddress: newEmail,
      userId: user.id,
      language: user.language,
      payload: { verifyUrl: accountTokenLink(input.verifyUrl, token), validForHours: linkValidForHours(ttlSeconds) },
    });
    if (user.accountConfirmedAt) {
      await tx.insert(outgoingMessages).values({
        template: "email-change-requested",
        toAddress: user.email,
        userId: user.id,
        language: user.language,
        payload: { newEmail },
      });
    }
    return { token };
  });
}
