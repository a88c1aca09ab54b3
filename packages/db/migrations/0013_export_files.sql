-- Export files stored in PostgreSQL (stored_files + stored_file_parts), daily export configuration and
-- the record of each day exported (unique per study, survey and day), and the index a survey's export
-- in arrival order reads.
CREATE TABLE "daily_export_configs" (
	"study_key" text PRIMARY KEY NOT NULL,
	"survey_keys" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"options" jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "daily_exports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"survey_key" text NOT NULL,
	"day" text NOT NULL,
	"task_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stored_file_parts" (
	"file_id" uuid NOT NULL,
	"chunk_index" integer NOT NULL,
	"seq" bigint NOT NULL,
	"rows" integer DEFAULT 0 NOT NULL,
	"separator" boolean DEFAULT false NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "stored_file_parts_file_id_chunk_index_seq_pk" PRIMARY KEY("file_id","chunk_index","seq")
);
--> statement-breakpoint
CREATE TABLE "stored_files" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"task_id" uuid,
	"name" text NOT NULL,
	"content_type" text NOT NULL,
	"content_encoding" text,
	"size" bigint DEFAULT 0 NOT NULL,
	"rows" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"complete" boolean DEFAULT false NOT NULL,
	"expired_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "daily_export_configs" ADD CONSTRAINT "daily_export_configs_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "daily_exports" ADD CONSTRAINT "daily_exports_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "daily_exports" ADD CONSTRAINT "daily_exports_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stored_file_parts" ADD CONSTRAINT "stored_file_parts_file_id_stored_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."stored_files"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stored_files" ADD CONSTRAINT "stored_files_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stored_files" ADD CONSTRAINT "stored_files_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "daily_exports_day_uq" ON "daily_exports" USING btree ("study_key","survey_key","day");--> statement-breakpoint
CREATE INDEX "stored_files_study_idx" ON "stored_files" USING btree ("study_key","created_at");--> statement-breakpoint
CREATE INDEX "stored_files_task_idx" ON "stored_files" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "stored_files_expires_idx" ON "stored_files" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "survey_responses_study_key_arrived_idx" ON "survey_responses" USING btree ("study_key","key","arrived_at","id");--> statement-breakpoint
-- Parts are gzip members or dense text: TOAST compression would spend CPU for nothing, so store them
-- out of line uncompressed.
ALTER TABLE "stored_file_parts" ALTER COLUMN "data" SET STORAGE EXTERNAL;
