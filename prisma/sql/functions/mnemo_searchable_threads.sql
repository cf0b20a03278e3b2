-- mnemo_searchable_threads: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The threads recall may search: the user's own, not temporary, not
-- `exclude_thread`, each with the time its messages count from (the later of
-- "forget me" for the thread and `since`), in the memory scope (lib/projects/scope.ts); never a member's private
-- chat in a shared project (lib/projects/access.ts): no one's recall reads it.
CREATE OR REPLACE FUNCTION mnemo_searchable_threads(uid text, exclude_thread text, since timestamp, scope_project text,
                                                    scope_general boolean)
  RETURNS TABLE (id text, title text, "createdAt" timestamp, since timestamp)
  LANGUAGE sql STABLE
  AS $$
    SELECT t.id, t.title, t."createdAt", GREATEST(COALESCE(t."recallFrom", '-infinity'::timestamp), since)
    FROM "Thread" t
    WHERE t."userId" = uid AND NOT t.temporary AND (exclude_thread IS NULL OR t.id <> exclude_thread)
      AND ((scope_general AND t."projectId" IS NULL) OR t."projectId" = scope_project)
      AND NOT t.private
  $$;
