-- Indexes for an account's mails (the resend limit, the lifecycle rounds and an account's deletion
-- read outgoing_messages by user) and for the sweep of expired account links. Built inside the
-- migration's transaction: writes to the two tables wait until each index is built (an outbox of
-- a million rows takes seconds), reads do not.
CREATE INDEX "outgoing_messages_user_idx" ON "outgoing_messages" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "password_reset_tokens_expires_idx" ON "password_reset_tokens" USING btree ("expires_at");
