import { eq, not } from "drizzle-orm";
import { users, type Executor } from "@studyflow/db";
import { peekAccountToken } from "./account-tokens";
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
 * How long after a repeated sign-up (the owner's own address and password, see signUp) the app's
 * follow-up write is expected. tekenradar's sign-up form signs in and writes within one or two
 * seconds of the sign-up's answer (two server actions in a row); five minutes leaves room for a
 * slow phone without letting a mark from long ago swallow a real change.
 */
export const SIGNUP_FOLLOW_UP_SECONDS = 5 * 60;

/**
 * What a participant app writes right after a sign-up for the new account: tekenradar's
 * signup-form.tsx sends `manageSubscription(false)`, only `subscribedToNewsletter: false`.
 */
const isSignupDefaultsWrite = (changes: ContactPreferenceChanges) =>
  changes.subscribedToNewsletter === false &&
  changes.toggleWeeklySubscription !== true &&
  changes.subscribedToWeekly === undefined &&
  changes.receiveWeeklyMessageDayOfWeek === undefined;

/**
 * Updates the account's contact preferences as case-backend does: the newsletter flag is set to
 * the value sent (absent keeps it, where case-backend's decoder would read false), the weekly
 * subscription flips when `toggleWeeklySubscription` is true. The row is locked, so a toggle is
 * atomic. One exception: the first write of a new account's defaults within
 * {@link SIGNUP_FOLLOW_UP_SECONDS} after the owner signed up again with the account's own address
 * and password is the app's sign-up flow, not the owner's choice, and is skipped (the mark is
 * spent). Returns whether the write was applied.
 */
export async function updateContactPreferences(
  db: Executor,
  userId: string,
  changes: ContactPreferenceChanges,
  now: Date,
): Promise<{ applied: boolean }> {
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
  return db.transaction(async (tx) => {
    const [account] = await tx
      .select({ signupRepeatedAt: users.signupRepeatedAt })
      .from(users)
      .where(eq(users.id, userId))
      .limit(1)
      .for("update");
    if (!account) throw new NotFound("account not found");
    const repeated = account.signupRepeatedAt;
    const sinceRepeat = repeated ? (now.getTime() - repeated.getTime()) / 1000 : Infinity;
    if (sinceRepeat >= 0 && sinceRepeat <= SIGNUP_FOLLOW_UP_SECONDS && isSignupDefaultsWrite(changes)) {
      await tx.update(users).set({ signupRepeatedAt: null }).where(eq(users.id, userId));
      return { applied: false };
    }
    // Nothing to change (every key absent): the account as it is.
    if (Object.keys(set).length > 0) await tx.update(users).set(set).where(eq(users.id, userId));
    return { applied: true };
  });
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
