-- The data explorer's kept counts of flag values (participant_flag_buckets): participants per
-- study, flag key, flag value and ten minutes (and day) of entry, so that a flag filter's total and
-- a deep page in entry order are summed rather than counted. On a live database this migration
-- blocks writes to participants, never reads, until it commits: the backfill reads every
-- participant twice (about 3 s for a million on a loaded machine). The lock is taken first so that
-- no write lands between the backfill's snapshot and the triggers that keep the counts from then on.
LOCK TABLE "participants" IN SHARE MODE;--> statement-breakpoint
CREATE TABLE "explorer_unkept_flag_keys" (
	"study_key" text NOT NULL,
	"flag_key" text NOT NULL,
	CONSTRAINT "explorer_unkept_flag_keys_study_key_flag_key_pk" PRIMARY KEY("study_key","flag_key")
);
--> statement-breakpoint
CREATE TABLE "participant_flag_buckets" (
	"study_key" text NOT NULL,
	"flag_key" text NOT NULL,
	"flag_value" text NOT NULL,
	"width" integer NOT NULL,
	"bucket" bigint NOT NULL,
	"slot" smallint NOT NULL,
	"count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "participant_flag_buckets_study_key_flag_key_flag_value_width_bucket_slot_pk" PRIMARY KEY("study_key","flag_key","flag_value","width","bucket","slot")
);
--> statement-breakpoint
CREATE TABLE "participant_flag_values" (
	"study_key" text NOT NULL,
	"flag_key" text NOT NULL,
	"flag_value" text NOT NULL,
	CONSTRAINT "participant_flag_values_study_key_flag_key_flag_value_pk" PRIMARY KEY("study_key","flag_key","flag_value")
);
--> statement-breakpoint
-- Applies a statement's changes of (study, flag key, flag value, ten minutes of entry) counts: the
-- counts per ten minutes and per day of the connection's slot (pg_backend_pid() % 32), upserted in
-- key order so that concurrent writers lock counter rows in one order. A value not seen before for
-- its key is recorded; a key past 64 values stops being kept, for good: it joins
-- explorer_unkept_flag_keys and its counts are dropped (the explorer counts such filters).
CREATE FUNCTION participant_flag_counts_apply(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  crowded record;
BEGIN
  FOR crowded IN
    WITH fresh AS (
      INSERT INTO participant_flag_values AS v (study_key, flag_key, flag_value)
      SELECT DISTINCT d.study_key, d.flag_key, d.flag_value
      FROM jsonb_to_recordset(deltas) AS d(study_key text, flag_key text, flag_value text, slice bigint, delta bigint)
      WHERE d.delta > 0
        AND NOT EXISTS (SELECT 1 FROM explorer_unkept_flag_keys u WHERE u.study_key = d.study_key AND u.flag_key = d.flag_key)
      ORDER BY 1, 2, 3
      ON CONFLICT DO NOTHING
      RETURNING v.study_key, v.flag_key)
    SELECT DISTINCT fresh.study_key, fresh.flag_key FROM fresh ORDER BY 1, 2
  LOOP
    IF (SELECT count(*) FROM participant_flag_values v
        WHERE v.study_key = crowded.study_key AND v.flag_key = crowded.flag_key) > 64 THEN
      INSERT INTO explorer_unkept_flag_keys (study_key, flag_key) VALUES (crowded.study_key, crowded.flag_key)
        ON CONFLICT DO NOTHING;
      DELETE FROM participant_flag_buckets b WHERE b.study_key = crowded.study_key AND b.flag_key = crowded.flag_key;
      DELETE FROM participant_flag_values v WHERE v.study_key = crowded.study_key AND v.flag_key = crowded.flag_key;
    END IF;
  END LOOP;
  INSERT INTO participant_flag_buckets AS b (study_key, flag_key, flag_value, width, bucket, slot, count)
  SELECT d.study_key, d.flag_key, d.flag_value, w.width,
         CASE w.width WHEN 600 THEN d.slice ELSE explorer_bucket(d.slice, 144) END, pg_backend_pid() % 32, sum(d.delta)
  FROM jsonb_to_recordset(deltas) AS d(study_key text, flag_key text, flag_value text, slice bigint, delta bigint)
  CROSS JOIN (VALUES (600), (86400)) AS w(width)
  WHERE NOT EXISTS (SELECT 1 FROM explorer_unkept_flag_keys u WHERE u.study_key = d.study_key AND u.flag_key = d.flag_key)
  GROUP BY 1, 2, 3, 4, 5 HAVING sum(d.delta) <> 0
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (study_key, flag_key, flag_value, width, bucket, slot) DO UPDATE SET count = b.count + excluded.count;
END $$;
--> statement-breakpoint
-- The triggers below pass a statement's changes: its rows grouped by study, ten minutes of entry
-- and whole flags, old rows counting -1 and new rows +1, so that rows whose flags and entry time
-- did not change cancel out (a submit that changes no flag writes nothing) and a bulk update of
-- many rows to a few flag sets expands each set once. Only entries of an object with a non-null
-- value are counted, as the explorer's filter reads them (flags ->> key).
--> statement-breakpoint
CREATE FUNCTION participant_flag_buckets_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('study_key', g.study_key, 'flag_key', f.key, 'flag_value', f.value,
                                      'slice', g.slice, 'delta', g.n))
  INTO deltas
  FROM (
    SELECT r.study_key, explorer_bucket(r.entered_at, 600) AS slice, r.flags, sum(r.n) AS n
    FROM (SELECT study_key, entered_at, flags, 1 AS n FROM new_rows) AS r
    GROUP BY 1, 2, 3 HAVING sum(r.n) <> 0
  ) g
  CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(g.flags) = 'object' THEN g.flags ELSE '{}'::jsonb END) AS f
  WHERE f.value IS NOT NULL;
  IF deltas IS NOT NULL THEN
    PERFORM participant_flag_counts_apply(deltas);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION participant_flag_buckets_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('study_key', g.study_key, 'flag_key', f.key, 'flag_value', f.value,
                                      'slice', g.slice, 'delta', g.n))
  INTO deltas
  FROM (
    SELECT r.study_key, explorer_bucket(r.entered_at, 600) AS slice, r.flags, sum(r.n) AS n
    FROM (SELECT study_key, entered_at, flags, -1 AS n FROM old_rows) AS r
    GROUP BY 1, 2, 3 HAVING sum(r.n) <> 0
  ) g
  CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(g.flags) = 'object' THEN g.flags ELSE '{}'::jsonb END) AS f
  WHERE f.value IS NOT NULL;
  IF deltas IS NOT NULL THEN
    PERFORM participant_flag_counts_apply(deltas);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION participant_flag_buckets_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('study_key', g.study_key, 'flag_key', f.key, 'flag_value', f.value,
                                      'slice', g.slice, 'delta', g.n))
  INTO deltas
  FROM (
    SELECT r.study_key, explorer_bucket(r.entered_at, 600) AS slice, r.flags, sum(r.n) AS n
    FROM (SELECT study_key, entered_at, flags, -1 AS n FROM old_rows
          UNION ALL
          SELECT study_key, entered_at, flags, 1 FROM new_rows) AS r
    GROUP BY 1, 2, 3 HAVING sum(r.n) <> 0
  ) g
  CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(g.flags) = 'object' THEN g.flags ELSE '{}'::jsonb END) AS f
  WHERE f.value IS NOT NULL;
  IF deltas IS NOT NULL THEN
    PERFORM participant_flag_counts_apply(deltas);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER participants_flag_counts_insert AFTER INSERT ON participants
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_flag_buckets_after_insert();
--> statement-breakpoint
CREATE TRIGGER participants_flag_counts_delete AFTER DELETE ON participants
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_flag_buckets_after_delete();
--> statement-breakpoint
CREATE TRIGGER participants_flag_counts_update AFTER UPDATE ON participants
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_flag_buckets_after_update();
--> statement-breakpoint
-- The backfill: keys with more than 64 values in a study are not kept from the start.
INSERT INTO explorer_unkept_flag_keys (study_key, flag_key)
SELECT study_key, key FROM (
  SELECT DISTINCT p.study_key, f.key, f.value
  FROM participants p
  CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(p.flags) = 'object' THEN p.flags ELSE '{}'::jsonb END) AS f
  WHERE f.value IS NOT NULL
) AS v
GROUP BY 1, 2 HAVING count(*) > 64;
--> statement-breakpoint
INSERT INTO participant_flag_buckets (study_key, flag_key, flag_value, width, bucket, slot, count)
SELECT p.study_key, f.key, f.value, w.width, explorer_bucket(p.entered_at, w.width), 0, count(*)
FROM participants p
CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(p.flags) = 'object' THEN p.flags ELSE '{}'::jsonb END) AS f
CROSS JOIN (VALUES (600), (86400)) AS w(width)
WHERE f.value IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM explorer_unkept_flag_keys u WHERE u.study_key = p.study_key AND u.flag_key = f.key)
GROUP BY 1, 2, 3, 4, 5;
--> statement-breakpoint
INSERT INTO participant_flag_values (study_key, flag_key, flag_value)
SELECT DISTINCT study_key, flag_key, flag_value FROM participant_flag_buckets;
