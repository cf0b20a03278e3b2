-- mnemo_user_tag: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
CREATE OR REPLACE FUNCTION mnemo_user_tag(uid text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT substr(md5(COALESCE(uid, '')), 1, 12) || ':' $$;
