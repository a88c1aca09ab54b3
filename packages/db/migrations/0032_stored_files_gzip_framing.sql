-- How a gzip file's parts are stored. Until now every part of a gzip export was a gzip member of
-- its own: a valid .gz file, but HTTP clients that decode Content-Encoding: gzip (Chromium, curl)
-- stop after the first member and silently drop the rest of the rows. New gzip files store raw
-- DEFLATE parts that read as one gzip member ("stream"); the files already written keep their
-- members ("members") and are sent decompressed. A stream's decompressed size (plain_size) is
-- summed from its parts when it completes.
ALTER TABLE "stored_files" ADD COLUMN "gzip_framing" text;--> statement-breakpoint
ALTER TABLE "stored_files" ADD COLUMN "plain_size" bigint;--> statement-breakpoint
UPDATE "stored_files" SET "gzip_framing" = 'members' WHERE "content_encoding" = 'gzip';--> statement-breakpoint
ALTER TABLE "stored_files" ADD CONSTRAINT "stored_files_gzip_framing" CHECK (coalesce("stored_files"."content_encoding" = 'gzip', false) = ("stored_files"."gzip_framing" is not null) and "stored_files"."gzip_framing" in ('stream', 'members'));
