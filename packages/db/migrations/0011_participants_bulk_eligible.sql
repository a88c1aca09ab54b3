-- The participants a bulk run evaluates, in key order: a run that reads only the rows its rules can
-- change counts the ones it passed over from this index alone, and chunk planning walks it.
-- Measured on a million participants: planning 1.3–1.8 s → 0.12 s, counting a chunk of 25,000
-- 12.6 → 5.6 ms; single-row inserts 470–510 µs with and without it.
CREATE INDEX "participants_bulk_eligible_idx" ON "participants" USING btree ("study_key","participant_id") WHERE study_status not in ('accountDeleted', 'temporary');
