CREATE TABLE "rule_failures" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"participant_id" text NOT NULL,
	"event_type" text NOT NULL,
	"event_key" text DEFAULT '' NOT NULL,
	"rules_version" integer,
	"task_id" uuid,
	"rule_index" integer NOT NULL,
	"path" text NOT NULL,
	"message" text NOT NULL,
	"outcome" text NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "rule_failures" ADD CONSTRAINT "rule_failures_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rule_failures" ADD CONSTRAINT "rule_failures_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rule_failures_study_time_idx" ON "rule_failures" USING btree ("study_key","occurred_at");--> statement-breakpoint
CREATE INDEX "rule_failures_participant_idx" ON "rule_failures" USING btree ("study_key","participant_id");