-- A study's own retention of finished tasks (study_task_retention), and the indexes that let removing a
-- task set rule_failures.task_id and daily_exports.task_id to null without scanning those tables.
CREATE TABLE "study_task_retention" (
	"study_key" text PRIMARY KEY NOT NULL,
	"days" integer,
	"timer_days" integer,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "study_task_retention" ADD CONSTRAINT "study_task_retention_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rule_failures_task_idx" ON "rule_failures" USING btree ("task_id") WHERE "rule_failures"."task_id" is not null;--> statement-breakpoint
CREATE INDEX "daily_exports_task_idx" ON "daily_exports" USING btree ("task_id") WHERE "daily_exports"."task_id" is not null;
