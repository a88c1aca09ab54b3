import type { profiles } from "@studyflow/db";

/**
 * case-backend's alias for a main profile (`BlurEmailAddress`): the first character of the
 * address, four stars, `@` and what follows the first `@` (further `@`s dropped, as Go's
 * `strings.Join(items[1:], "")` drops them); `****@**` for an address with nothing before its `@`.
 * Participant apps show it as the profile's name ("p****@example.org (Ik)"), so the full address
 * is not on screen; tekenradar's own lib/blurEmail.ts is the same function.
 */
export function blurEmailAddress(email: string): string {
  const [local = "", ...rest] = email.split("@");
  // a code point, as Go's []rune takes it: a character outside the BMP stays whole
  const first = [...local][0];
  if (first === undefined) return "****@**";
  return `${first}****@${rest.join("")}`;
}

/**
 * The main profile of an account being created, as case-backend creates it at sign-up (and in its
 * CLI, its external-IdP and its migration paths): named by the blurred address, with consent
 * taken at creation (signing up is the consent the app asks for). Every path that creates an
 * account inserts this, so none leaves the app a nameless profile without consent ("(Ik)" and a
 * disabled save button in tekenradar's profile editor).
 */
export function mainProfileValues(
  userId: string,
  email: string,
  now: Date,
  alias: string = blurEmailAddress(email),
): typeof profiles.$inferInsert {
  return { userId, alias, mainProfile: true, avatarId: "default", consentConfirmedAt: now };
}
