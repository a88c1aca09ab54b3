-- Keeps study_participant_counts exact. Statement-level triggers with transition tables: a bulk
-- statement over 1,000 participants costs one aggregate, and one whose statuses do not change
-- writes no counter row at all (so it takes no lock that participant events would wait on).
-- Rows are upserted in key order, so concurrent transactions lock counter rows in the same order.
CREATE FUNCTION participant_counts_apply(deltas jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO study_participant_counts AS c (study_key, study_status, count)
  SELECT d.study_key, d.study_status, d.delta
  FROM jsonb_to_recordset(deltas) AS d(study_key text, study_status text, delta bigint)
  WHERE d.delta <> 0
  ORDER BY d.study_key, d.study_status
  ON CONFLICT (study_key, study_status) DO UPDATE SET count = c.count + excluded.count;
$$;
--> statement-breakpoint
CREATE FUNCTION participant_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM participant_counts_apply(coalesce((
    SELECT jsonb_agg(jsonb_build_object('study_key', study_key, 'study_status', study_status, 'delta', n))
    FROM (SELECT study_key, study_status, count(*) AS n FROM new_rows GROUP BY 1, 2) g), '[]'::jsonb));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION participant_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM participant_counts_apply(coalesce((
    SELECT jsonb_agg(jsonb_build_object('study_key', study_key, 'study_status', study_status, 'delta', -n))
    FROM (SELECT study_key, study_status, count(*) AS n FROM old_rows GROUP BY 1, 2) g), '[]'::jsonb));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION participant_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM participant_counts_apply(coalesce((
    SELECT jsonb_agg(jsonb_build_object('study_key', study_key, 'study_status', study_status, 'delta', n))
    FROM (
      SELECT study_key, study_status, sum(n) AS n FROM (
        SELECT study_key, study_status, -count(*) AS n FROM old_rows GROUP BY 1, 2
        UNION ALL
        SELECT study_key, study_status, count(*) AS n FROM new_rows GROUP BY 1, 2
      ) both_sides GROUP BY 1, 2 HAVING sum(n) <> 0
    ) g), '[]'::jsonb));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER participants_count_insert AFTER INSERT ON participants
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_counts_after_insert();
--> statement-breakpoint
CREATE TRIGGER participants_count_delete AFTER DELETE ON participants
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_counts_after_delete();
--> statement-breakpoint
CREATE TRIGGER participants_count_update AFTER UPDATE ON participants
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION participant_counts_after_update();
--> statement-breakpoint
INSERT INTO study_participant_counts (study_key, study_status, count)
SELECT study_key, study_status, count(*) FROM participants GROUP BY 1, 2;
