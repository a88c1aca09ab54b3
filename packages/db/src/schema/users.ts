import { sql } from "drizzle-orm";
import { boolean, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
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
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("users_email_uq").on(t.email)],
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
    createdAt: createdAt(),
  },
  (t) => [index("profiles_user_idx").on(t.userId)],
);

export type TokenPurpose = "password-reset";

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
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("password_reset_tokens_hash_uq").on(t.tokenHash),
    index("password_reset_tokens_user_idx").on(t.userId),
  ],
);
