-- Two more kept counts for the data explorer's deep pages in the API's default orders:
-- response_arrival_buckets also counts a survey's responses per hour and day of submission
-- (submitted_at), and participant_id_buckets counts a study's participants per id prefix of 3 and of
-- 4 characters. On a live database this migration blocks writes to participants and
-- survey_responses, never reads, until it commits: the backfill reads every row of both (about
-- 10 s for a million of each at load 9). The lock is taken first so that no write lands
-- between the backfill's snapshot and the triggers that keep the counts from then on.
LOCK TABLE "participants", "survey_responses" IN SHARE MODE;--> statement-breakpoint
CREATE TABLE "participant_id_buckets" (
	"study_key" text NOT NULL,
	"prefix_length" smallint NOT NULL,
	"prefix" text COLLATE "C" NOT NULL,
	"count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "participant_id_buckets_study_key_prefix_length_prefix_pk" PRIMARY KEY("study_key","prefix_length","prefix")
);
--> statement-breakpoint
ALTER TABLE "response_arrival_buckets" ADD COLUMN "submitted" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- A response counts once in the bucket of its arrival (count) and once in the bucket of its
-- submission (submitted), per hour and per day. Both are summed by bucket in one aggregate, so a
-- response submitted in the hour it arrived (every online submission) upserts one row per width,
-- as before this migration; an imported one, two.
CREATE OR REPLACE FUNCTION response_arrival_buckets_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO response_arrival_buckets AS b (study_key, survey_key, width, bucket, slot, count, submitted)
  SELECT r.study_key, r.key, w.width, t.bucket, pg_backend_pid() % 32, sum(t.arrived), sum(t.submitted)
  FROM new_rows r CROSS JOIN (VALUES (3600), (86400)) AS w(width)
  CROSS JOIN LATERAL (VALUES (explorer_bucket(r.arrived_at, w.width), 1, 0),
                             (explorer_bucket(r.submitted_at, w.width), 0, 1)) AS t(bucket, arrived, submitted)
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (study_key, survey_key, width, bucket, slot)
    DO UPDATE SET count = b.count + excluded.count, submitted = b.submitted + excluded.submitted;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION response_arrival_buckets_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO response_arrival_buckets AS b (study_key, survey_key, width, bucket, slot, count, submitted)
  SELECT r.study_key, r.key, w.width, t.bucket, pg_backend_pid() % 32, -sum(t.arrived), -sum(t.submitted)
  FROM old_rows r CROSS JOIN (VALUES (3600), (86400)) AS w(width)
  CROSS JOIN LATERAL (VALUES (explorer_bucket(r.arrived_at, w.width), 1, 0),
                             (explorer_bucket(r.submitted_at, w.width), 0, 1)) AS t(bucket, arrived, submitted)
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (study_key, survey_key, width, bucket, slot)
    DO UPDATE SET count = b.count + excluded.count, submitted = b.submitted + excluded.submitted;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION response_arrival_buckets_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO response_arrival_buckets AS b (study_key, survey_key, width, bucket, slot, count, submitted)
  SELECT study_key, survey_key, width, bucket, pg_backend_pid() % 32, sum(arrived), sum(submitted) FROM (
    SELECT r.study_key, r.key AS survey_key, w.width, t.bucket, -t.arrived AS arrived, -t.submitted AS submitted
    FROM old_rows r CROSS JOIN (VALUES (3600), (86400)) AS w(width)
    CROSS JOIN LATERAL (VALUES (explorer_bucket(r.arrived_at, w.width), 1, 0),
                               (explorer_bucket(r.submitted_at, w.width), 0, 1)) AS t(bucket, arrived, submitted)
    UNION ALL
    SELECT r.study_key, r.key, w.width, t.bucket, t.arrived, t.submitted
    FROM new_rows r CROSS JOIN (VALUES (3600), (86400)) AS w(width)
    CROSS JOIN LATERAL (VALUES (explorer_bucket(r.arrived_at, w.width), 1, 0),
                               (explorer_bucket(r.submitted_at, w.width), 0, 1)) AS t(bucket, arrived, submitted)
  ) both_sides
  GROUP BY 1, 2, 3, 4 HAVING sum(arrived) <> 0 OR sum(submitted) <> 0
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (study_key, survey_key, width, bucket, slot)
    DO UPDATE SET count = b.count + excluded.count, submitted = b.submitted + excluded.submitted;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Participants per study and id prefix (3 and 4 characters), upserted in key order after the
-- status counts (these triggers' names sort after participants_count_*, and PostgreSQL fires a
-- table's triggers in name order), so concurrent writers lock counter rows in one order. Only
-- inserts, deletes and id changes write here: a submit or a flag write touches no such row.
CREATE FUNCTION participant_id_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO participant_id_buckets AS b (study_key, prefix_length, prefix, count)
  SELECT n.study_key, l.len, left(n.participant_id, l.len), count(*)
  FROM new_rows n CROSS JOIN (VALUES (3::smallint), (4::smallint)) AS l(len)
  GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT (study_key, prefix_length, prefix) DO UPDATE SET count = b.count + excluded.count;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION participant_id_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO participant_id_buckets AS b (study_key, prefix_length, prefix, count)
  SELECT o.study_key, l.len, left(o.participant_id, l.len), -count(*)
  FROM old_rows o CROSS JOIN (VALUES (3::smallint), (4::smallint)) AS l(len)
  GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT (study_key, prefix_length, prefix) DO UPDATE SET count = b.count + excluded.count;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION participant_id_counts_after_id_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO participant_id_buckets AS b (study_key, prefix_length, prefix, count)
  SELECT d.study_key, l.len, left(d.participant_id, l.len), sum(d.delta)
  FROM (VALUES (OLD.study_key, OLD.participant_id, -1), (NEW.study_key, NEW.participant_id, 1))
    AS d(study_key, participant_id, delta)
  CROSS JOIN (VALUES (3::smallint), (4::smallint)) AS l(len)
  GROUP BY 1, 2, 3 HAVING sum(d.delta) <> 0
  ORDER BY 1, 2, 3
  ON CONFLICT (study_key, prefix_length, prefix) DO UPDATE SET count = b.count + excluded.count;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER participants_id_counts_insert AFTER INSERT ON participants
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_id_counts_after_insert();
--> statement-breakpoint
CREATE TRIGGER participants_id_counts_delete AFTER DELETE ON participants
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_id_counts_after_delete();
--> statement-breakpoint
-- Row-level with a column list and a condition: an update that sets neither column (every submit,
-- every rule write) does not fire it at all.
CREATE TRIGGER participants_id_counts_update AFTER UPDATE OF participant_id, study_key ON participants
  FOR EACH ROW WHEN (OLD.participant_id IS DISTINCT FROM NEW.participant_id OR OLD.study_key IS DISTINCT FROM NEW.study_key)
  EXECUTE FUNCTION participant_id_counts_after_id_change();
--> statement-breakpoint
INSERT INTO participant_id_buckets (study_key, prefix_length, prefix, count)
SELECT p.study_key, l.len, left(p.participant_id, l.len) COLLATE "C", count(*)
FROM participants p CROSS JOIN (VALUES (3::smallint), (4::smallint)) AS l(len)
GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO response_arrival_buckets AS b (study_key, survey_key, width, bucket, slot, count, submitted)
SELECT r.study_key, r.key, w.width, explorer_bucket(r.submitted_at, w.width), 0, 0, count(*)
FROM survey_responses r CROSS JOIN (VALUES (3600), (86400)) AS w(width)
GROUP BY 1, 2, 3, 4
ON CONFLICT (study_key, survey_key, width, bucket, slot) DO UPDATE SET submitted = b.submitted + excluded.submitted;
