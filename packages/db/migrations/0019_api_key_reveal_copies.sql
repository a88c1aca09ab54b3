-- A key made through the API is kept sealed for its creator's first key list (case-admin shows a
-- new key only there), for minutes at most; 0017 dropped the copies that every list showed.
ALTER TABLE "api_keys" ADD COLUMN "reveal_sealed" "bytea";--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "reveal_until" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "api_keys_reveal_until_idx" ON "api_keys" USING btree ("reveal_until") WHERE "api_keys"."reveal_sealed" is not null;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_reveal_window" CHECK (("api_keys"."reveal_sealed" is null) = ("api_keys"."reveal_until" is null));