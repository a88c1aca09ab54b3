import { jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { users } from "./users";

/**
 * What a participant app keeps about an account beyond its profile (case-backend's
 * `userAttributes`): one document per account and `type`, replaced whole on every write. The id
 * is 24 hex digits, the form of the ObjectIds case-backend gives them, so imported ids keep working.
 */
export const userAttributes = pgTable(
  "user_attributes",
  {
    id: text("id").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    /** The app's own keys and values, as sent; null when it sent none (case-backend stores a nil map). */
    attributes: jsonb("attributes").$type<Record<string, unknown> | null>(),
    /** When the document was last written: case-backend sets its `createdAt` on every write. */
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [uniqueIndex("user_attributes_user_type_uq").on(t.userId, t.type)],
);
