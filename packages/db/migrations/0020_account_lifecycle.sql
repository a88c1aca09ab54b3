-- The account lifecycle rounds of the worker: the one reminder to confirm an address and the
-- inactivity notice are recorded on the account, so a round never sends either twice; a deletion
-- records why it happens, which picks its confirmation mail (none for an address never proven).
ALTER TABLE "users" ADD COLUMN "verification_reminder_sent_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "inactivity_notified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "account_deletions" ADD COLUMN "reason" text DEFAULT 'requested' NOT NULL;