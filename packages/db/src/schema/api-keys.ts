import { sql } from "drizzle-orm";
import { check, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { bytea, serviceAccounts } from "./management";

/**
 * API keys of service accounts: machines calling the management API. The key itself is shown to
 * its creator once; only its SHA-256 is kept for good. A key made through the API keeps a sealed
 * copy for a few minutes, until its creator's first key list shows it (case-admin's dialog shows a
 * new key only from that list). A key acts as its `subject`, whose permissions are granted as for
 * a person (never admin).
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** The management subject the key authenticates as (its permissions are this subject's). */
    subject: text("subject").notNull(),
    /** What the key is for, shown in lists. */
    label: text("label").notNull().default(""),
    /** Hex SHA-256 of the whole key: looked up on every request. */
    keyHash: text("key_hash").notNull().unique(),
    /** The key's first characters, to tell keys apart in lists; not enough to use it. */
    keyPrefix: text("key_prefix").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
    /** The service account the key belongs to (its subject is then the account's id); null for older keys. */
    serviceAccountId: uuid("service_account_id").references(() => serviceAccounts.id, { onDelete: "cascade" }),
    /**
     * The key sealed (AES-256-GCM, MANAGEMENT_SECRETS_KEY) for its creator (`created_by`) only,
     * until their first list of the account's keys shows it or `reveal_until` passes; then erased.
     */
    revealSealed: bytea("reveal_sealed"),
    /** End of the window in which `reveal_sealed` may be shown; set exactly when it is. */
    revealUntil: timestamp("reveal_until", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("api_keys_service_account_idx").on(t.serviceAccountId),
    // Only the few rows holding a copy, for the sweep of copies past their window.
    index("api_keys_reveal_until_idx")
      .on(t.revealUntil)
      .where(sql`${t.revealSealed} is not null`),
    check("api_keys_reveal_window", sql`(${t.revealSealed} is null) = (${t.revealUntil} is null)`),
  ],
);
