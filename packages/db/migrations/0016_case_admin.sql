-- case-admin on studyflow (issue 27): management users and their sessions (the identity provider's
-- refresh token sealed with MANAGEMENT_SECRETS_KEY), permissions with case-backend's subject type,
-- resource type and limiter (rows from before are study rights of management users), app roles and
-- their templates, service accounts owning API keys (with a sealed copy of new keys for case-admin's
-- key list), case-backend's e-mail templates (global and per study), SMS templates, scheduled
-- e-mails, the study variables' descriptions as case-admin edits them, and a study's refreshed
-- response count.
CREATE TABLE "study_stats" (
	"study_key" text PRIMARY KEY NOT NULL,
	"response_count" bigint DEFAULT 0 NOT NULL,
	"counted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app_role_templates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"app_name" text NOT NULL,
	"role" text NOT NULL,
	"required_permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app_roles" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"subject_type" text NOT NULL,
	"subject_id" text NOT NULL,
	"app_name" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "management_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"renew_token_enc" "bytea",
	"key_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "management_users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"provider" text DEFAULT '' NOT NULL,
	"sub" text NOT NULL,
	"email" text DEFAULT '' NOT NULL,
	"username" text DEFAULT '' NOT NULL,
	"image_url" text DEFAULT '' NOT NULL,
	"is_admin" boolean DEFAULT false NOT NULL,
	"last_login_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"label" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "email_templates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"study_key" text,
	"message_type" text NOT NULL,
	"default_language" text DEFAULT '' NOT NULL,
	"header_overrides" jsonb,
	"translations" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "email_templates_type_study_uq" UNIQUE NULLS NOT DISTINCT("message_type","study_key")
);
--> statement-breakpoint
CREATE TABLE "scheduled_emails" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"type" text NOT NULL,
	"study_key" text,
	"label" text DEFAULT '' NOT NULL,
	"template" jsonb NOT NULL,
	"condition" jsonb,
	"next_time" bigint NOT NULL,
	"period" bigint DEFAULT 0 NOT NULL,
	"until" bigint DEFAULT 0 NOT NULL,
	"created_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_templates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"message_type" text NOT NULL,
	"default_language" text DEFAULT '' NOT NULL,
	"from_name" text DEFAULT '' NOT NULL,
	"translations" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_templates_message_type_uq" UNIQUE("message_type")
);
--> statement-breakpoint
DROP INDEX "permissions_uq";--> statement-breakpoint
ALTER TABLE "study_variables" ADD COLUMN "label" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "study_variables" ADD COLUMN "description" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "study_variables" ADD COLUMN "ui_type" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "study_variables" ADD COLUMN "ui_priority" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "study_variables" ADD COLUMN "configs" jsonb;--> statement-breakpoint
ALTER TABLE "study_variables" ADD COLUMN "created_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "study_variables" ADD COLUMN "config_updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "permissions" ADD COLUMN "subject_type" text DEFAULT 'management-user' NOT NULL;--> statement-breakpoint
ALTER TABLE "permissions" ADD COLUMN "resource_type" text DEFAULT 'study' NOT NULL;--> statement-breakpoint
ALTER TABLE "permissions" ADD COLUMN "limiter" jsonb;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "service_account_id" uuid;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "key_enc" "bytea";--> statement-breakpoint
ALTER TABLE "study_stats" ADD CONSTRAINT "study_stats_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "management_sessions" ADD CONSTRAINT "management_sessions_user_id_management_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."management_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_templates" ADD CONSTRAINT "email_templates_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_emails" ADD CONSTRAINT "scheduled_emails_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "app_role_templates_app_role_uq" ON "app_role_templates" USING btree ("app_name","role");--> statement-breakpoint
CREATE UNIQUE INDEX "app_roles_subject_role_uq" ON "app_roles" USING btree ("subject_type","subject_id","app_name","role");--> statement-breakpoint
CREATE INDEX "app_roles_app_idx" ON "app_roles" USING btree ("app_name","role");--> statement-breakpoint
CREATE INDEX "management_sessions_user_idx" ON "management_sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "management_sessions_expires_idx" ON "management_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "management_users_provider_sub_uq" ON "management_users" USING btree ("provider","sub");--> statement-breakpoint
CREATE INDEX "scheduled_emails_next_time_idx" ON "scheduled_emails" USING btree ("next_time");--> statement-breakpoint
CREATE INDEX "scheduled_emails_study_idx" ON "scheduled_emails" USING btree ("study_key") WHERE "scheduled_emails"."study_key" is not null;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_service_account_id_service_accounts_id_fk" FOREIGN KEY ("service_account_id") REFERENCES "public"."service_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "permissions_resource_idx" ON "permissions" USING btree ("resource_type","study_key");--> statement-breakpoint
CREATE INDEX "api_keys_service_account_idx" ON "api_keys" USING btree ("service_account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "permissions_uq" ON "permissions" USING btree ("subject_id","subject_type","resource_type","study_key","action",md5(coalesce("limiter"::text, '')));--> statement-breakpoint
-- Variables defined before this migration: described since their value was set.
UPDATE "study_variables" SET "created_at" = "value_updated_at", "config_updated_at" = "value_updated_at";--> statement-breakpoint
INSERT INTO "study_stats" ("study_key", "response_count")
SELECT "study_key", count(*) FROM "survey_responses" GROUP BY "study_key";--> statement-breakpoint
-- Announced to the API's read cache (see 0010): a user's admin flag, read at each request, and
-- sessions, which end the tokens minted for them. A sign-in's last_login_at and a session's
-- last_used_at change nothing a request checks: not announced.
CREATE TRIGGER management_users_cache_notify AFTER UPDATE OF is_admin OR DELETE ON management_users
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('management-user', 'id');--> statement-breakpoint
CREATE TRIGGER management_sessions_cache_notify AFTER UPDATE OF expires_at OR DELETE ON management_sessions
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('management-session', 'id');
