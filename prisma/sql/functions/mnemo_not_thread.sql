-- mnemo_not_thread: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- "Not in this thread", to AND with a word query.
CREATE OR REPLACE FUNCTION mnemo_not_thread(tid text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT !! ('''' || mnemo_thread_tag(tid) || '''')::tsquery $$;
