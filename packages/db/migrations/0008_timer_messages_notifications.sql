CREATE TABLE "study_timers" (
	"study_key" text PRIMARY KEY NOT NULL,
	"interval_seconds" integer,
	"offset_seconds" integer DEFAULT 0 NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "message_templates" (
	"study_key" text NOT NULL,
	"message_type" text NOT NULL,
	"language" text NOT NULL,
	"subject" text NOT NULL,
	"body" text NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_templates_study_key_message_type_language_pk" PRIMARY KEY("study_key","message_type","language")
);
--> statement-breakpoint
CREATE TABLE "participant_message_schedule" (
	"study_key" text NOT NULL,
	"participant_id" text NOT NULL,
	"message_id" text NOT NULL,
	"message_type" text NOT NULL,
	"due_at" bigint NOT NULL,
	CONSTRAINT "participant_message_schedule_study_key_participant_id_message_id_pk" PRIMARY KEY("study_key","participant_id","message_id")
);
--> statement-breakpoint
CREATE TABLE "researcher_subscriptions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"study_key" text NOT NULL,
	"message_type" text NOT NULL,
	"email" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "researcher_messages" ADD COLUMN "delivered_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "study_timers" ADD CONSTRAINT "study_timers_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "message_templates" ADD CONSTRAINT "message_templates_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "participant_message_schedule" ADD CONSTRAINT "participant_message_schedule_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "participant_message_schedule" ADD CONSTRAINT "participant_message_schedule_participant_fk" FOREIGN KEY ("study_key","participant_id") REFERENCES "public"."participants"("study_key","participant_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "researcher_subscriptions" ADD CONSTRAINT "researcher_subscriptions_study_key_studies_key_fk" FOREIGN KEY ("study_key") REFERENCES "public"."studies"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "participant_message_schedule_due_idx" ON "participant_message_schedule" USING btree ("due_at");--> statement-breakpoint
CREATE UNIQUE INDEX "researcher_subscriptions_uq" ON "researcher_subscriptions" USING btree ("study_key","message_type","email");--> statement-breakpoint
CREATE INDEX "researcher_messages_undelivered_idx" ON "researcher_messages" USING btree ("id") WHERE "researcher_messages"."delivered_at" is null;--> statement-breakpoint
-- Scheduled messages already held by participants get their due time indexed too.
INSERT INTO "participant_message_schedule" ("study_key", "participant_id", "message_id", "message_type", "due_at")
SELECT p."study_key", p."participant_id", m->>'id', coalesce(m->>'type', ''), (m->>'scheduledFor')::bigint
FROM "participants" p, jsonb_array_elements(p."messages") m
WHERE jsonb_typeof(p."messages") = 'array' AND m->>'id' IS NOT NULL AND (m->>'scheduledFor') ~ '^-?[0-9]+$'
ON CONFLICT DO NOTHING;
