-- from prisma/sql/functions/mnemo_memories_by_id.sql
-- mnemo_memories_by_id: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The memories recall found by meaning only (not among the word matches or the profile it read), as recall shows
-- them: the user's, in the scope, active and not muted. A function, so it travels in the same statement as the vector
-- hits' neighbours (lib/memory/recall-passages.ts): as a query of its own it cost a statement and Prisma's work.
CREATE OR REPLACE FUNCTION mnemo_memories_by_id(uid text, ids text[], scope_project text, scope_general boolean,
                                                scope_private boolean)
RETURNS TABLE (id text, text text, kind text, pinned boolean, "sourceRef" text, "needsRevalidation" boolean,
               tokens int, since timestamp(3))
LANGUAGE sql STABLE AS $$
  SELECT m.id, m.text, m.kind::text, m.pinned, m."sourceRef", m."needsRevalidation", m.tokens,
         COALESCE(m."validFrom", m."createdAt")
    FROM "Memory" m
   WHERE m.id = ANY(ids) AND m."userId" = uid AND m.status = 'active' AND NOT m.muted
     AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND (scope_private OR NOT m.private)
$$;
