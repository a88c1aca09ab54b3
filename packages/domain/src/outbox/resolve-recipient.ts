import { and, eq } from "drizzle-orm";
import { confidentialIdMap, profiles, users, type Executor } from "@studyflow/db";
import type { OutboxMessage } from "./outbox-repository";

export interface Recipient {
  address: string;
  /** The row's language, else the account's preferred one when the account was looked up. */
  language: string | null;
  /** The study profile behind the row's confidential id, when that is how it was found. */
  profile?: { userId: string; profileId: string; alias: string };
}

/**
 * Who a message goes to, looked up at delivery time so that a changed e-mail address is used:
 * the row's own address, else its user's, else the user behind the study participant's
 * confidential id. Null when none of these leads to an address.
 */
export async function resolveRecipient(
  db: Executor,
  message: Pick<OutboxMessage, "toAddress" | "userId" | "studyKey" | "confidentialId" | "language">,
): Promise<Recipient | null> {
  if (message.toAddress) return { address: message.toAddress, language: message.language };
  if (message.userId) {
    const [account] = await db
      .select({ email: users.email, language: users.preferredLanguage })
      .from(users)
      .where(eq(users.id, message.userId))
      .limit(1);
    return account ? { address: account.email, language: message.language ?? account.language } : null;
  }
  if (!message.studyKey || !message.confidentialId) return null;
  const [found] = await db
    .select({
      email: users.email,
      language: users.preferredLanguage,
      userId: users.id,
      profileId: profiles.id,
      alias: profiles.alias,
    })
    .from(confidentialIdMap)
    .innerJoin(profiles, eq(profiles.id, confidentialIdMap.profileId))
    .innerJoin(users, eq(users.id, profiles.userId))
    .where(
      and(
        eq(confidentialIdMap.studyKey, message.studyKey),
        eq(confidentialIdMap.confidentialId, message.confidentialId),
      ),
    )
    .limit(1);
  if (!found) return null;
  const { email, language, ...profile } = found;
  return { address: email, language: message.language ?? language, profile };
}
