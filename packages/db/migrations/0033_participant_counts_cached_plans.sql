-- The participant count triggers (0002, 0026) cost more than the counts they keep. Two reasons:
--
-- * participant_counts_apply was a LANGUAGE sql function. PostgreSQL plans the statements of such a
--   function again on every call: its two INSERT … ON CONFLICT statements were parsed and planned
--   for every statement that touched participants. A plpgsql function keeps its plans for the
--   session.
-- * The update trigger called it on every UPDATE of participants, also when no status and no
--   entry time changed (an empty delta list, the common case: a submit). It now calls it only
--   when there is something to add, as the flag triggers (0028) already do. So do the insert and
--   delete triggers: an INSERT … ON CONFLICT DO NOTHING that inserted nothing fires them too.
--
-- What the functions write is unchanged: the same rows, in the same key order.
CREATE OR REPLACE FUNCTION participant_counts_apply(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO study_participant_counts AS c (study_key, study_status, count)
  SELECT d.study_key, d.study_status, sum(d.delta)
  FROM jsonb_to_recordset(deltas) AS d(study_key text, study_status text, slice bigint, delta bigint)
  GROUP BY 1, 2 HAVING sum(d.delta) <> 0
  ORDER BY 1, 2
  ON CONFLICT (study_key, study_status) DO UPDATE SET count = c.count + excluded.count;
  INSERT INTO participant_entry_buckets AS b (study_key, width, bucket, study_status, count)
  SELECT d.study_key, w.width, CASE w.width WHEN 600 THEN d.slice ELSE explorer_bucket(d.slice, 144) END,
         d.study_status, sum(d.delta)
  FROM jsonb_to_recordset(deltas) AS d(study_key text, study_status text, slice bigint, delta bigint)
  CROSS JOIN (VALUES (600), (86400)) AS w(width)
  GROUP BY 1, 2, 3, 4 HAVING sum(d.delta) <> 0
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (study_key, width, bucket, study_status) DO UPDATE SET count = b.count + excluded.count;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION participant_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('study_key', study_key, 'study_status', study_status, 'slice', slice, 'delta', n))
  INTO deltas
  FROM (SELECT study_key, study_status, explorer_bucket(entered_at, 600) AS slice, count(*) AS n
        FROM new_rows GROUP BY 1, 2, 3) g;
  IF deltas IS NOT NULL THEN
    PERFORM participant_counts_apply(deltas);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION participant_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('study_key', study_key, 'study_status', study_status, 'slice', slice, 'delta', -n))
  INTO deltas
  FROM (SELECT study_key, study_status, explorer_bucket(entered_at, 600) AS slice, count(*) AS n
        FROM old_rows GROUP BY 1, 2, 3) g;
  IF deltas IS NOT NULL THEN
    PERFORM participant_counts_apply(deltas);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION participant_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('study_key', study_key, 'study_status', study_status, 'slice', slice, 'delta', n))
  INTO deltas
  FROM (
    SELECT study_key, study_status, slice, sum(n) AS n FROM (
      SELECT study_key, study_status, explorer_bucket(entered_at, 600) AS slice, -count(*) AS n FROM old_rows GROUP BY 1, 2, 3
      UNION ALL
      SELECT study_key, study_status, explorer_bucket(entered_at, 600) AS slice, count(*) AS n FROM new_rows GROUP BY 1, 2, 3
    ) both_sides GROUP BY 1, 2, 3 HAVING sum(n) <> 0
  ) g;
  IF deltas IS NOT NULL THEN
    PERFORM participant_counts_apply(deltas);
  END IF;
  RETURN NULL;
END $$;
