-- mnemo_thread_tag: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- Hand-written: each message's search entries also carry one tag of its thread,
-- so recall can leave the current thread out inside the index ("words & NOT
-- this thread"): GIN then skips that thread's messages from its posting lists
-- instead of fetching each one to throw it away, and recall no longer slows
-- down as the conversation being written grows. Tags start with '#', which no
-- user-keyed word entry does (those start with a hex user tag).
CREATE OR REPLACE FUNCTION mnemo_thread_tag(tid text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT '#' || substr(md5(COALESCE(tid, '')), 1, 16) $$;
