CREATE TABLE "study_participant_counts" (
	"study_key" text NOT NULL,
	"study_status" text NOT NULL,
	"count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "study_participant_counts_study_key_study_status_pk" PRIMARY KEY("study_key","study_status")
);
