-- Keyset pages of a study's responses and reports in export order (submitted_at or timestamp, then id),
-- for the whole study or one survey/report key: exports and the data explorer read them without a sort.
CREATE INDEX "survey_responses_study_submitted_idx" ON "survey_responses" USING btree ("study_key","submitted_at","id");--> statement-breakpoint
CREATE INDEX "survey_responses_study_key_submitted_idx" ON "survey_responses" USING btree ("study_key","key","submitted_at","id");--> statement-breakpoint
CREATE INDEX "reports_study_timestamp_idx" ON "reports" USING btree ("study_key","timestamp","id");--> statement-breakpoint
CREATE INDEX "reports_study_key_timestamp_idx" ON "reports" USING btree ("study_key","key","timestamp","id");