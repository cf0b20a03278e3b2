-- from prisma/sql/functions/mnemo_thread_attachments.sql
-- mnemo_thread_attachments: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes
-- the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The files sent in a thread, without their bytes or text, as a set-returning function so a turn reads them in its
-- one batched read (lib/db/function-calls.ts) instead of a round trip of its own (lib/attachments/prompt.ts).
CREATE OR REPLACE FUNCTION mnemo_thread_attachments(p_thread text)
RETURNS TABLE (id text, name text, kind text, tokens integer, pages integer, "itemId" text, mime text)
LANGUAGE sql STABLE AS $$
  SELECT a.id, a.name, a.kind::text, a.tokens, a.pages, a."itemId", a.mime
  FROM "Attachment" a
  WHERE a."threadId" = p_thread AND a."itemId" IS NOT NULL
  ORDER BY a."createdAt", a.id
$$;
