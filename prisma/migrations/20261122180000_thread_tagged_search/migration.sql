-- Hand-written: each message's search entries also carry one tag of its thread,
-- so recall can leave the current thread out inside the index ("words & NOT
-- this thread"): GIN then skips that thread's messages from its posting lists
-- instead of fetching each one to throw it away, and recall no longer slows
-- down as the conversation being written grows. Tags start with '#', which no
-- user-keyed word entry does (those start with a hex user tag).
CREATE FUNCTION mnemo_thread_tag(tid text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT '#' || substr(md5(COALESCE(tid, '')), 1, 16) $$;

-- "Not in this thread", to AND with a word query.
CREATE FUNCTION mnemo_not_thread(tid text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT !! ('''' || mnemo_thread_tag(tid) || '''')::tsquery $$;

DROP INDEX "Item_search_idx";
ALTER TABLE "Item" DROP COLUMN "search";
ALTER TABLE "Item" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
  mnemo_user_tsvector("userId",
    CASE WHEN "searchTokens" IS NULL THEN to_tsvector('english', "content") ELSE to_tsvector('simple', "searchTokens") END)
  || array_to_tsvector(ARRAY[mnemo_thread_tag("threadId")])
) STORED;
CREATE INDEX "Item_search_idx" ON "Item" USING GIN ("search");

-- The messages matching a word query, through the GIN index whatever the
-- planner guesses (a query built inside the statement is unknown at planning
-- time, and an embedded database without statistics would otherwise read the
-- whole table), at most `lim` of them: recall's cost stays bounded.
CREATE FUNCTION mnemo_search_items(q tsquery, lim int)
  RETURNS TABLE (id text, "threadId" text, "position" int, search tsvector, tokens int, "createdAt" timestamp(3), role "ItemRole")
  LANGUAGE sql STABLE SET enable_seqscan = off
  AS $$ SELECT i.id, i."threadId", i.position, i.search, i.tokens, i."createdAt", i.role FROM "Item" i WHERE i.search @@ q LIMIT lim $$;
