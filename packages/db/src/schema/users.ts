import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** Login e-mail, stored lower-cased and trimmed. */
    email: text("email").notNull(),
    /** argon2id encoded hash. */
    passwordHash: text("password_hash").notNull(),
    /** Bumped on password reset: participant tokens carrying an older value are refused. */
    tokenVersion: integer("token_version").notNull().default(0),
    preferredLanguage: text("preferred_language").notNull().default("en"),
    passwordChangedAt: timestamp("password_changed_at", { withTimezone: true, mode: "date" }),
    /** When the address was proven (verify-email link, or an e-mail OTP); null until then. */
    accountConfirmedAt: timestamp("account_confirmed_at", { withTimezone: true, mode: "date" }),
    subscribedToNewsletter: boolean("subscribed_to_newsletter").notNull().default(false),
    subscribedToWeekly: boolean("subscribed_to_weekly").notNull().default(false),
    /** 0 = Sunday … 6 = Saturday, as CASE's contact preferences count them. */
    weeklyMessageDayOfWeek: integer("weekly_message_day_of_week").notNull().default(0),
    /** Set by an operator (CLI user:lock): no sign-in, no token renewal until unlocked. */
    lockedAt: timestamp("locked_at", { withTimezone: true, mode: "date" }),
    /** Set when the participant asked to delete the account: signed out, the deletion task runs. */
    deletionRequestedAt: timestamp("deletion_requested_at", { withTimezone: true, mode: "date" }),
    lastLoginAt: timestamp("last_login_at", { withTimezone: true, mode: "date" }),
    /**
     * When the account's own address and password were last sent to sign-up. A participant app
     * signs in after a sign-up and writes a new account's defaults (tekenradar turns the newsletter
     * off); the first such write soon after this is skipped, so a repeated sign-up changes nothing.
     */
    signupRepeatedAt: timestamp("signup_repeated_at", { withTimezone: true, mode: "date" }),
    /**
     * When the one reminder to confirm the address went out (worker: remind-unverified-accounts);
     * set in the transaction that queues it, so no round sends a second.
     */
    verificationReminderSentAt: timestamp("verification_reminder_sent_at", { withTimezone: true, mode: "date" }),
    /**
     * When the account was last told it will be deleted for inactivity (account-inactivity). The
     * deletion follows a grace period later unless the account was active after this instant; a
     * sign-in after it starts the count again.
     */
    inactivityNotifiedAt: timestamp("inactivity_notified_at", { withTimezone: true, mode: "date" }),
    /** Accounts kept at an external OpenID provider: its issuer and the subject there. */
    externalIssuer: text("external_issuer"),
    externalSubject: text("external_subject"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("users_email_uq").on(t.email),
    uniqueIndex("users_external_subject_uq").on(t.externalIssuer, t.externalSubject),
  ],
);

export const profiles = pgTable(
  "profiles",
  {
    id: text("id")
      .primaryKey()
      .default(sql`replace(gen_random_uuid()::text, '-', '')`),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    alias: text("alias").notNull().default(""),
    mainProfile: boolean("main_profile").notNull().default(false),
    avatarId: text("avatar_id").notNull().default("default"),
    consentConfirmedAt: timestamp("consent_confirmed_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
  },
  (t) => [index("profiles_user_idx").on(t.userId)],
);

/**
 * What a one-time account token (mailed link) is for. `survey-login` is CASE's temp token
 * (login-with-temptoken, temptoken-info); `change-email` carries the new address in `info`.
 */
export type TokenPurpose =
  "password-reset" | "verify-email" | "change-email" | "survey-login" | "unsubscribe-newsletter" | "account-deletion";

export const passwordResetTokens = pgTable(
  "password_reset_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** SHA-256 of the token, hex; the token itself is never stored. */
    tokenHash: text("token_hash").notNull(),
    purpose: text("purpose").$type<TokenPurpose>().notNull(),
    /** Purpose-specific data, e.g. the new address of a change-email token, a study key. */
    info: jsonb("info").$type<Record<string, string>>().notNull().default({}),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("password_reset_tokens_hash_uq").on(t.tokenHash),
    index("password_reset_tokens_user_idx").on(t.userId),
    // the sweep of expired links
    index("password_reset_tokens_expires_idx").on(t.expiresAt),
  ],
);
