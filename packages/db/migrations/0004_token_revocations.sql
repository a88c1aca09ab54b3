CREATE TABLE "token_revocations" (
	"subject_id" text PRIMARY KEY NOT NULL,
	"revoked_before" timestamp with time zone NOT NULL
);
