-- mnemo_context_window: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The per-turn history window and its summary (lib/chat/context.ts) as a function:
-- PL/pgSQL keeps its plan, where the same query sent as text was parsed and
-- planned every turn (about 1 ms of a 2.4 ms query on PostgreSQL). The walk
-- follows parent links from the leaf, carrying ids only, and stops after lim
-- items, or (max_tokens set) once past the budget and the summary's last item.
-- The summary comes on the first row only: joined to every row, a long thread's summary was copied into each of
-- its hundred rows, built into the turn's JSON and parsed again (stop 60).
CREATE OR REPLACE FUNCTION mnemo_context_window(leaf text, thread text, lim int, since timestamp, max_tokens int)
  RETURNS TABLE (id text, "parentId" text, "position" int, role text, content text, "toolCalls" jsonb, "toolCallId" text,
                 "toolName" text, status text, error text, model text, tokens int, "promptTokens" int,
                 "completionTokens" int, "sourceRef" text, "createdAt" timestamp(3),
                 s_id text, s_content text, s_tokens int, s_through int, s_version int)
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH RECURSIVE ends AS MATERIALIZED (
       SELECT su."throughItemId" AS id FROM "Summary" su WHERE su."threadId" = thread
     ), walk AS (
       SELECT i.id, i."parentId", 1 AS depth, i.tokens AS total, i.id IN (SELECT e.id FROM ends e) AS summarized
       FROM "Item" i WHERE i.id = leaf AND i."threadId" = thread
       UNION ALL
       SELECT i.id, i."parentId", w.depth + 1, w.total + i.tokens, w.summarized OR i.id IN (SELECT e.id FROM ends e)
       FROM "Item" i JOIN walk w ON i.id = w."parentId"
       WHERE w.depth < lim AND (max_tokens IS NULL OR w.total <= max_tokens OR (NOT w.summarized AND EXISTS (SELECT 1 FROM ends)))
     ), path AS MATERIALIZED (
       SELECT i.id, i."parentId", i.position, i.role::text AS role, i.content, i."toolCalls", i."toolCallId",
              i."toolName", i.status::text AS status, i.error, i.model, i.tokens, i."promptTokens",
              i."completionTokens", i."sourceRef", i."createdAt"
       FROM walk w JOIN "Item" i ON i.id = w.id
     ), s AS (
       SELECT su.id, su.content, su.tokens, su."throughPosition", su.version FROM "Summary" su
       WHERE su."threadId" = thread AND su."throughItemId" IN (SELECT p.id FROM path p WHERE p."createdAt" >= since)
       ORDER BY su.version DESC LIMIT 1
     )
    SELECT p.id, p."parentId", p.position, p.role, p.content, p."toolCalls", p."toolCallId", p."toolName", p.status,
           p.error, p.model, p.tokens, p."promptTokens", p."completionTokens", p."sourceRef", p."createdAt",
           s.id, s.content, s.tokens, s."throughPosition", s.version
    FROM path p LEFT JOIN s ON p.position = (SELECT min(f.position) FROM path f WHERE f."createdAt" >= since)
    WHERE p."createdAt" >= since ORDER BY p.position ASC;
  END
  $$;
