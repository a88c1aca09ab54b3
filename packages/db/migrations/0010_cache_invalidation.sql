-- The API keeps study rows, rules versions, permissions, token revocations, service keys, token
-- versions and profile owners in memory (packages/domain/src/cache). Every committed change of
-- those rows is announced on the channel studyflow_cache as "<topic>:<key>", whoever makes it: an
-- API replica, the CLI, a migration or an operator's SQL. Each API process listens and forgets the
-- entry; NOTIFY is delivered at commit, in commit order, and never for a rolled-back change.
CREATE OR REPLACE FUNCTION studyflow_cache_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  topic text := TG_ARGV[0];
  key_column text := TG_ARGV[1];
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM pg_notify('studyflow_cache', topic || ':' || (to_jsonb(OLD) ->> key_column));
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM pg_notify('studyflow_cache', topic || ':' || (to_jsonb(NEW) ->> key_column));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER studies_cache_notify AFTER INSERT OR UPDATE OR DELETE ON studies
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('study', 'key');
--> statement-breakpoint
CREATE TRIGGER study_rules_cache_notify AFTER INSERT OR UPDATE OR DELETE ON study_rules
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('rules', 'study_key');
--> statement-breakpoint
CREATE TRIGGER permissions_cache_notify AFTER INSERT OR UPDATE OR DELETE ON permissions
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('grants', 'subject_id');
--> statement-breakpoint
CREATE TRIGGER token_revocations_cache_notify AFTER INSERT OR UPDATE OR DELETE ON token_revocations
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('revocation', 'subject_id');
--> statement-breakpoint
-- A key's last use, written at most once a minute, changes nothing a request checks: not announced.
CREATE TRIGGER api_keys_cache_notify AFTER UPDATE OF key_hash, subject, expires_at, revoked_at OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('api-key', 'key_hash');
--> statement-breakpoint
-- New users and profiles need no announcement: only rows that exist are kept.
CREATE TRIGGER users_cache_notify AFTER UPDATE OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('user', 'id');
--> statement-breakpoint
CREATE TRIGGER profiles_cache_notify AFTER UPDATE OR DELETE ON profiles
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('profile', 'id');
