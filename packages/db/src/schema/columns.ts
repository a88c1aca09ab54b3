import { bigint, timestamp } from "drizzle-orm/pg-core";

/** Unix seconds, as the participant model of the interface uses them. */
export const unixSeconds = (name: string) => bigint(name, { mode: "number" });

/** Server-side wall clock, for bookkeeping columns (tasks, tokens, outbox). */
export const createdAt = () => timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow();
