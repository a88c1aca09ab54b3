import { eq } from "drizzle-orm";
import { users, type Executor } from "@studyflow/db";
import { Invalid, NotFound } from "../errors";

/**
 * What case-backend accepts as a participant's language (its CheckLanguageCode): two lower-case
 * letters, optionally a region of two capitals or three digits (`en`, `nl-BE`, `es-419`).
 */
export const CASE_LANGUAGE_CODE = /^[a-z]{2}(-([A-Z]{2}|\d{3}))?$/;

export const INVALID_LANGUAGE_CODE_MESSAGE = "invalid language code";

/** Sets the language the account's mails are written in, refusing what case-backend refuses. */
export async function setPreferredLanguage(db: Executor, userId: string, language: string): Promise<void> {
  if (!CASE_LANGUAGE_CODE.test(language)) throw new Invalid(INVALID_LANGUAGE_CODE_MESSAGE);
  const updated = await db
    .update(users)
    .set({ preferredLanguage: language })
    .where(eq(users.id, userId))
    .returning({ id: users.id });
  if (updated.length === 0) throw new NotFound("account not found");
}
