-- The read cache keeps one thing of a user row: its token version (packages/domain/src/access/
-- token-versions.ts), dropped when the row goes. Every sign-in writes last_login_at, and the
-- trigger of 0010 announced each one: a NOTIFY per sign-in, and the API processes forgot the
-- user's token version, to read it again on the account's next request. Only a change of
-- token_version (a password reset, a revocation) and a deletion are announced now.
-- Locks users in SHARE ROW EXCLUSIVE mode for the two statements (no rows are read or written).
DROP TRIGGER users_cache_notify ON users;
--> statement-breakpoint
CREATE TRIGGER users_cache_notify AFTER UPDATE OF token_version OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION studyflow_cache_notify('user', 'id');
