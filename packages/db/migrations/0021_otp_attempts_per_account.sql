CREATE TABLE "otp_failed_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "otp_failed_attempts" ADD CONSTRAINT "otp_failed_attempts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "otp_failed_attempts_user_idx" ON "otp_failed_attempts" USING btree ("user_id","at");--> statement-breakpoint
ALTER TABLE "otp_codes" DROP COLUMN "attempts";