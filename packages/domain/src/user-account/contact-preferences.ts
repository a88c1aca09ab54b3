import { eq, not } from "drizzle-orm";
import { users, type Executor } from "@studyflow/db";
import { peekAccountToken } from "../accounts/account-tokens";
import { Invalid, NotFound, Unauthorized } from "../errors";

export interface ContactPreferenceChanges {
  subscribedToNewsletter?: boolean;
  /** CASE's participant apps send a toggle: true flips the weekly subscription. */
  toggleWeeklySubscription?: boolean;
  /** Or the value itself (studyflow's clients); applied after a toggle if both are sent. */
  subscribedToWeekly?: boolean;
  /** 0 = Sunday … 6 = Saturday. */
  receiveWeeklyMessageDayOfWeek?: number;
}

/**
 * Updates the account's contact preferences as case-backend does: the newsletter flag is set to
 * the value sent (absent keeps it, where case-backend's decoder would read false), the weekly
 * subscription flips when `toggleWeeklySubscription` is true. One UPDATE, so a toggle is atomic.
 */
export async function updateContactPreferences(
  db: Executor,
  userId: string,
  changes: ContactPreferenceChanges,
): Promise<void> {
  const day = changes.receiveWeeklyMessageDayOfWeek;
  if (day !== undefined && (!Number.isInteger(day) || day < 0 || day > 6)) {
    throw new Invalid("receiveWeeklyMessageDayOfWeek: a day from 0 (Sunday) to 6 (Saturday)");
  }
  const weekly =
    changes.subscribedToWeekly !== undefined
      ? { subscribedToWeekly: changes.subscribedToWeekly }
      : changes.toggleWeeklySubscription === true
        ? { subscribedToWeekly: not(users.subscribedToWeekly) }
        : {};
  const set = {
    ...(changes.subscribedToNewsletter === undefined ? {} : { subscribedToNewsletter: changes.subscribedToNewsletter }),
    ...weekly,
    ...(day === undefined ? {} : { weeklyMessageDayOfWeek: day }),
  };
  // Nothing to change (every key absent): the account as it is, if it exists.
  const [row] =
    Object.keys(set).length === 0
      ? await db.select({ id: users.id }).from(users).where(eq(users.id, userId)).limit(1)
      : await db.update(users).set(set).where(eq(users.id, userId)).returning({ id: users.id });
  if (!row) throw new NotFound("account not found");
}

/**
 * One message for unknown, expired and malformed tokens: none can be told apart. A 401, as for
 * studyflow's other mailed tokens (case-backend answers 400; its apps test only for 200).
 */
export const INVALID_UNSUBSCRIBE_TOKEN_MESSAGE = "invalid or expired unsubscribe token";

/**
 * Unsubscribes the token's account from the newsletter (a mailed link; no sign-in). As in
 * case-backend the token is not spent: the link in every newsletter keeps working until it
 * expires, and using it twice changes nothing more.
 */
export async function unsubscribeNewsletter(db: Executor, token: string, now: Date): Promise<void> {
  const holder = await peekAccountToken(db, token, ["unsubscribe-newsletter"], now);
  if (!holder) throw new Unauthorized(INVALID_UNSUBSCRIBE_TOKEN_MESSAGE);
  await db.update(users).set({ subscribedToNewsletter: false }).where(eq(users.id, holder.userId));
}
