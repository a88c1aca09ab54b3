CREATE TABLE "studies" (
	"key" text PRIMARY KEY NOT NULL,
	"status" text DEFAULT 'inactive' NOT NULL,
	"secret" text NOT NULL,
	"track_account" boolean DEFAULT false NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "study_rules" (
	"study_key" text NOT NULL,
	"version" integer NOT NULL,
	"rules" jsonb NOT NULL,
	"uploaded_by" text NOT NULL,
	"uploaded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "study_rules_study_key_version_pk" PRIMARY KEY("study_key","version")
);
--> statement-breakpoint
CREATE TABLE "participants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"participant_id" text NOT NULL,
	"current_study_session" text DEFAULT '' NOT NULL,
	"entered_at" bigint NOT NULL,
	"modified_at" bigint NOT NULL,
	"study_status" text NOT NULL,
	"flags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"linking_codes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"assigned_surveys" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"last_submissions" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"messages" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"hashed_account_id" text,
	"is_main_profile" boolean,
	"version" integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "survey_responses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"participant_id" text NOT NULL,
	"key" text NOT NULL,
	"version_id" text DEFAULT '' NOT NULL,
	"opened_at" bigint DEFAULT 0 NOT NULL,
	"submitted_at" bigint DEFAULT 0 NOT NULL,
	"arrived_at" bigint NOT NULL,
	"responses" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"context" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "confidential_id_map" (
	"study_key" text NOT NULL,
	"confidential_id" text NOT NULL,
	"profile_id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "confidential_responses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"confidential_id" text NOT NULL,
	"key" text NOT NULL,
	"responses" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"participant_id" text NOT NULL,
	"key" text NOT NULL,
	"response_id" uuid,
	"event_type" text NOT NULL,
	"timestamp" bigint NOT NULL,
	"data" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "researcher_messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"study_key" text NOT NULL,
	"participant_id" text NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "study_code_lists" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"study_key" text NOT NULL,
	"list_key" text NOT NULL,
	"code" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "study_counters" (
	"study_key" text NOT NULL,
	"scope" text NOT NULL,
	"value" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "study_counters_study_key_scope_pk" PRIMARY KEY("study_key","scope")
);
--> statement-breakpoint
CREATE TABLE "study_variables" (
	"study_key" text NOT NULL,
	"key" text NOT NULL,
	"type" text NOT NULL,
	"value" jsonb NOT NULL,
	"value_updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "study_variables_study_key_key_pk" PRIMARY KEY("study_key","key")
);
--> statement-breakpoint
CREATE TABLE "outgoing_messages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"template" text NOT NULL,
	"to_address" text,
	"user_id" uuid,
	"study_key" text,
	"confidential_id" text,
	"language" text,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "task_chunks" (
	"task_id" uuid NOT NULL,
	"chunk_index" integer NOT NULL,
	"from_key" text NOT NULL,
	"to_key" text,
	"cursor" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"processed_count" integer DEFAULT 0 NOT NULL,
	"error_count" integer DEFAULT 0 NOT NULL,
	"changed_per_rule" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "task_chunks_task_id_chunk_index_pk" PRIMARY KEY("task_id","chunk_index")
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text NOT NULL,
	"kind" text NOT NULL,
	"input" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"target_count" integer DEFAULT 0 NOT NULL,
	"processed_count" integer DEFAULT 0 NOT NULL,
	"result_file" text DEFAULT '' NOT NULL,
	"file_type" text DEFAULT 'application/json' NOT NULL,
	"error" text DEFAULT '' NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "password_reset_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"purpose" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "profiles" (
	"id" text PRIMARY KEY DEFAULT replace(gen_random_uuid()::text, '-', '') NOT NULL,
	"user_id" uuid NOT NULL,
	"alias" text DEFAULT '' NOT NULL,
	"main_profile" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"token_version" integer DEFAULT 0 NOT NULL,
	"preferred_language" text DEFAULT 'en' NOT NULL,
	"password_changed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "permissions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"subject_id" text NOT NULL,
	"study_key" text NOT NULL,
	"action" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "study_rules" ADD CONSTRAINT "study_rules_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "participants" ADD CONSTRAINT "participants_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "survey_responses" ADD CONSTRAINT "survey_responses_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "confidential_id_map" ADD CONSTRAINT "confidential_id_map_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "confidential_responses" ADD CONSTRAINT "confidential_responses_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "researcher_messages" ADD CONSTRAINT "researcher_messages_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_code_lists" ADD CONSTRAINT "study_code_lists_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_counters" ADD CONSTRAINT "study_counters_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_variables" ADD CONSTRAINT "study_variables_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_chunks" ADD CONSTRAINT "task_chunks_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "password_reset_tokens" ADD CONSTRAINT "password_reset_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profiles" ADD CONSTRAINT "profiles_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "participants_study_participant_uq" ON "participants" USING btree ("study_key","participant_id");--> statement-breakpoint
CREATE INDEX "participants_study_status_idx" ON "participants" USING btree ("study_key","study_status");--> statement-breakpoint
CREATE INDEX "participants_temporary_entered_idx" ON "participants" USING btree ("study_key","entered_at") WHERE "participants"."study_status" = 'temporary';--> statement-breakpoint
CREATE INDEX "survey_responses_participant_idx" ON "survey_responses" USING btree ("study_key","participant_id","arrived_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "survey_responses_study_key_idx" ON "survey_responses" USING btree ("study_key","key");--> statement-breakpoint
CREATE INDEX "confidential_id_map_idx" ON "confidential_id_map" USING btree ("study_key","confidential_id");--> statement-breakpoint
CREATE INDEX "confidential_responses_owner_idx" ON "confidential_responses" USING btree ("study_key","confidential_id","key");--> statement-breakpoint
CREATE INDEX "reports_participant_idx" ON "reports" USING btree ("study_key","participant_id");--> statement-breakpoint
CREATE INDEX "researcher_messages_study_idx" ON "researcher_messages" USING btree ("study_key","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "study_code_lists_uq" ON "study_code_lists" USING btree ("study_key","list_key","code");--> statement-breakpoint
CREATE INDEX "outgoing_messages_pending_idx" ON "outgoing_messages" USING btree ("status","available_at");--> statement-breakpoint
CREATE INDEX "tasks_study_idx" ON "tasks" USING btree ("study_key","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "password_reset_tokens_hash_uq" ON "password_reset_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "password_reset_tokens_user_idx" ON "password_reset_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "profiles_user_idx" ON "profiles" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_uq" ON "users" USING btree ("email");--> statement-breakpoint
CREATE UNIQUE INDEX "permissions_uq" ON "permissions" USING btree ("subject_id","study_key","action");