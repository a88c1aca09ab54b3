CREATE TABLE "case_import_checkpoints" (
	"collection" text PRIMARY KEY NOT NULL,
	"file_bytes" bigint NOT NULL,
	"documents_done" bigint NOT NULL,
	"completed_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "case_import_records" (
	"kind" text NOT NULL,
	"source_id" text NOT NULL,
	"target_id" text NOT NULL,
	"content_hash" text NOT NULL,
	"kept" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"imported_at" timestamp with time zone NOT NULL,
	CONSTRAINT "case_import_records_kind_source_id_pk" PRIMARY KEY("kind","source_id")
);
