-- mnemo_search_items: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The messages matching a word query, through the GIN index whatever the
-- planner guesses (a query built inside the statement is unknown at planning
-- time, and an embedded database without statistics would otherwise read the
-- whole table), at most `lim` of them: recall's cost stays bounded.
CREATE OR REPLACE FUNCTION mnemo_search_items(q tsquery, lim int)
  RETURNS TABLE (id text, "threadId" text, "position" int, search tsvector, tokens int, "createdAt" timestamp(3), role "ItemRole")
  LANGUAGE sql STABLE SET enable_seqscan = off
  AS $$ SELECT i.id, i."threadId", i.position, i.search, i.tokens, i."createdAt", i.role FROM "Item" i WHERE i.search @@ q LIMIT lim $$;
