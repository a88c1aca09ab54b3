CREATE TABLE "survey_versions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"study_key" text NOT NULL,
	"survey_key" text NOT NULL,
	"version_id" text NOT NULL,
	"definition" jsonb NOT NULL,
	"published_at" timestamp with time zone DEFAULT now() NOT NULL,
	"published_by" text NOT NULL,
	"unpublished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"study_key" text,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"subject" text NOT NULL,
	"label" text DEFAULT '' NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
ALTER TABLE "studies" ADD COLUMN "props" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "survey_versions" ADD CONSTRAINT "survey_versions_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "survey_versions_uq" ON "survey_versions" USING btree ("study_key","survey_key","version_id");--> statement-breakpoint
CREATE INDEX "survey_versions_current_idx" ON "survey_versions" USING btree ("study_key","survey_key","published_at");--> statement-breakpoint
CREATE INDEX "audit_log_study_idx" ON "audit_log" USING btree ("study_key","at");