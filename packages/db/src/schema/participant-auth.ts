import { sql } from "drizzle-orm";
import {
  bigint,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { storedFiles } from "./stored-files";
import { studies } from "./studies";
import { users } from "./users";

const instant = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * A participant's sign-in session: one per login, the family of every refresh token it issues.
 * Revoking the session (logout, reuse of a spent refresh token, password change) ends them all.
 */
export const participantSessions = pgTable(
  "participant_sessions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The profile the session acts for by default (CASE's selectedProfile). */
    selectedProfileId: text("selected_profile_id"),
    /** When an e-mail OTP was last verified in this session (CASE's lastOTP.email). */
    lastEmailOtpAt: instant("last_email_otp_at"),
    /**
     * When the owner last proved it in this session with the password (sign-in) or an e-mail OTP
     * code: what re-authentication (account deletion) counts. Null for a session opened by a
     * mailed link (login-with-temptoken), which proves only that someone holds the link.
     */
    identityProvenAt: instant("identity_proven_at"),
    createdAt: createdAt(),
    lastUsedAt: instant("last_used_at").notNull().defaultNow(),
    /** Absolute end of the session, however often it is renewed. */
    expiresAt: instant("expires_at").notNull(),
    revokedAt: instant("revoked_at"),
    /** logout, refresh-reuse, password-change, password-reset, operator, account-deleted, … */
    revokedReason: text("revoked_reason"),
  },
  (t) => [index("participant_sessions_user_idx").on(t.userId)],
);

/**
 * The refresh tokens of a session, SHA-256 hashed. Each renewal spends one and issues its
 * successor (`replacedBy`); a spent token presented again after the grace period revokes the
 * session (reuse detection).
 */
export const refreshTokens = pgTable(
  "refresh_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    sessionId: uuid("session_id")
      .notNull()
      .references(() => participantSessions.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    createdAt: createdAt(),
    expiresAt: instant("expires_at").notNull(),
    /** Set when a renewal spent this token. */
    usedAt: instant("used_at"),
    replacedBy: uuid("replaced_by"),
  },
  (t) => [uniqueIndex("refresh_tokens_hash_uq").on(t.tokenHash), index("refresh_tokens_session_idx").on(t.sessionId)],
);

/** One-time codes sent by e-mail (CASE's OTP), hashed. `usedAt` ends a code (verified, or too many wrong ones). */
export const otpCodes = pgTable(
  "otp_codes",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    sessionId: uuid("session_id").references(() => participantSessions.id, { onDelete: "cascade" }),
    type: text("type").$type<"email">().notNull(),
    codeHash: text("code_hash").notNull(),
    createdAt: createdAt(),
    expiresAt: instant("expires_at").notNull(),
    usedAt: instant("used_at"),
  },
  (t) => [index("otp_codes_user_idx").on(t.userId, t.createdAt)],
);

/**
 * Wrong one-time codes per account (case-backend's failedOtpAttempts): the attempt budget counts
 * these over all of the account's codes, so asking for more codes gives no more guesses.
 */
export const otpFailedAttempts = pgTable(
  "otp_failed_attempts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    at: instant("at").notNull(),
  },
  (t) => [index("otp_failed_attempts_user_idx").on(t.userId, t.at)],
);

/**
 * Idempotency-Key records: the first answer to a (scope, key), returned again to every retry.
 * `scope` names the caller (participant user or management subject) so keys never cross users.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    /** Method and route the key was first used on. */
    operation: text("operation").notNull(),
    /** SHA-256 of the canonical request (path, body): another body with the same key is a 422. */
    requestHash: text("request_hash").notNull(),
    status: integer("status"),
    response: jsonb("response"),
    createdAt: createdAt(),
    completedAt: instant("completed_at"),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index("idempotency_keys_created_idx").on(t.createdAt)],
);

/** A file a participant uploaded (CASE's participant files), its bytes in the shared file store. */
export const participantFiles = pgTable(
  "participant_files",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    participantId: text("participant_id").notNull(),
    storedFileId: uuid("stored_file_id").references(() => storedFiles.id, { onDelete: "set null" }),
    fileType: text("file_type").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    /** CASE's file status: "uploading", "ready". */
    status: text("status").notNull().default("ready"),
    createdAt: createdAt(),
  },
  (t) => [index("participant_files_participant_idx").on(t.studyKey, t.participantId, t.createdAt)],
);

/**
 * An account deletion in progress: the durable record the deletion task works from, so a crash
 * resumes it. Holds no personal data (no e-mail): the user id only, which is gone with the user.
 */
export type AccountDeletionReason = "requested" | "inactivity" | "unverified";

export const accountDeletions = pgTable(
  "account_deletions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id").notNull(),
    /** pending, running, done, failed */
    status: text("status").notNull().default("pending"),
    /** Participants (study key, participant id) already taken out, so a resumed run skips them. */
    progress: jsonb("progress")
      .$type<{ done: string[] }>()
      .notNull()
      .default(sql`'{"done":[]}'::jsonb`),
    error: text("error"),
    /**
     * Why the account goes, which picks the confirmation mail: `requested` (the participant or an
     * operator: account-deleted), `inactivity` (account-deleted-after-inactivity), `unverified`
     * (an address never proven: no mail).
     */
    reason: text("reason").$type<AccountDeletionReason>().notNull().default("requested"),
    createdAt: createdAt(),
    finishedAt: instant("finished_at"),
  },
  (t) => [uniqueIndex("account_deletions_user_uq").on(t.userId)],
);
