import { index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { serviceAccounts } from "./management";

/**
 * API keys of service accounts: machines calling the management API. The key itself is shown
 * once, at creation; only its SHA-256 is stored. A key acts as its `subject`, whose permissions
 * are granted as for a person (never admin).
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
  },
  (t) => [index("api_keys_service_account_idx").on(t.serviceAccountId)],
);
