-- API keys are shown once, at creation: the sealed copies kept for case-admin's key list go.
-- Emptied before the drop: a dropped column's values stay in the rows until each row is rewritten,
-- while emptied ones are dead row versions that (auto)vacuum reclaims.
UPDATE "api_keys" SET "key_enc" = NULL WHERE "key_enc" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" DROP COLUMN "key_enc";
