import { boolean, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export type StudyStatus = "active" | "inactive";

/** Study-level configuration that is not worth a column of its own. */
export interface StudyConfig {
  /** Maximum age, in seconds, of a temporary participant that may still be merged. */
  temporaryParticipantMaxAgeSeconds?: number;
  /**
   * Strict rules: a participant event for which any rule fails (an action inside IFTHEN too) is
   * rejected whole, nothing stored, as the reference platform rejects events whose rules fail.
   * Default off: the failing rule (or IFTHEN action) is skipped, the rest is kept.
   */
  strictRules?: boolean;
  /** IANA zone the calendar functions of the rules compute in; default UTC. */
  timeZone?: string;
}

export const studies = pgTable("studies", {
  key: text("key").primaryKey(),
  status: text("status").$type<StudyStatus>().notNull().default("inactive"),
  /** Keys the HMAC that derives participant ids from profile ids; never leaves the server. */
  secret: text("secret").notNull(),
  trackAccount: boolean("track_account").notNull().default(false),
  config: jsonb("config").$type<StudyConfig>().notNull().default({}),
  createdAt: createdAt(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
