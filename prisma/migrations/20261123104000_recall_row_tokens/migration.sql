-- Recall's rows carry each message's stored token count, so recall estimates a
-- passage's size without running the tokenizer over every line (it still
-- counts each passage it keeps exactly, once). The recent exchanges also carry
-- the size of the history recall searches (positions handed out in the user's
-- searchable threads), which decides how far recency is trusted over weak word
-- matches: one query fewer per turn than asking for it separately.

ALTER TYPE mnemo_passage_row ADD ATTRIBUTE tokens int;

CREATE OR REPLACE FUNCTION mnemo_hits_with_neighbours(uid text, exclude_thread text, hit_ids text[], hit_ranks float8[], n int, since timestamp)
  RETURNS SETOF mnemo_passage_row
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH mine AS MATERIALIZED (
       SELECT * FROM mnemo_searchable_threads(uid, exclude_thread, since)
     ), hits AS MATERIALIZED (
       SELECT h.id, h."threadId", h.position, h."createdAt", x.rank, m.title, m."createdAt" AS "threadAt", m.since
       FROM unnest(hit_ids, hit_ranks) AS x(id, rank)
       JOIN "Item" h ON h.id = x.id JOIN mine m ON m.id = h."threadId"
       WHERE h.role IN ('user', 'assistant') AND h."createdAt" > m.since
     )
    SELECT h.id, h.position, h."createdAt", h.rank, nb.id, nb."threadId", nb.position,
           nb.role::text, nb.content, nb."sourceRef", h.title, h."threadAt", nb.tokens
    FROM hits h CROSS JOIN LATERAL (
       -- OFFSET 0 keeps the date test out here: pushed into the lookup, the
       -- generic plan ANDed it with the user's whole date index for every hit.
       SELECT i.id, i."threadId", i.position, i.role, i.content, i."sourceRef", i."createdAt", i.tokens FROM "Item" i
       WHERE i."threadId" = h."threadId" AND i.position BETWEEN h.position - n AND h.position + n
         AND i.role IN ('user', 'assistant') AND i.status IN ('complete', 'stopped')
       OFFSET 0
     ) nb
    WHERE nb."createdAt" > h.since
    ORDER BY h.rank DESC, h.id, nb.position;
  END
  $$;

-- The newest finished messages of the user's most recently active other
-- threads (threads by activity, newest messages first within each), each row
-- with its stored token count and the number of messages recall can search
-- (positions handed out in the user's searchable threads: an upper bound).
DROP FUNCTION mnemo_recent_exchanges(text, text, timestamp, int, int);
CREATE FUNCTION mnemo_recent_exchanges(uid text, exclude_thread text, since timestamp, threads int, per_thread int)
  RETURNS TABLE (id text, "threadId" text, "position" int, role text, content text, "sourceRef" text, title text,
                 "createdAt" timestamp(3), tokens int, "historyMessages" int)
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH searchable AS MATERIALIZED (
       SELECT t.id, t.title, t."createdAt", t."lastActivityAt", t."nextPosition", NOT t.archived AS listed,
              GREATEST(COALESCE(u."memoryResetAt", '-infinity'::timestamp), since) AS since
       FROM "Thread" t JOIN "User" u ON u.id = t."userId"
       WHERE t."userId" = uid AND NOT t.temporary AND (exclude_thread IS NULL OR t.id <> exclude_thread)
     ), history AS MATERIALIZED (
       SELECT COALESCE(sum(s."nextPosition"), 0)::int AS n FROM searchable s
     ), mine AS MATERIALIZED (
       SELECT * FROM searchable s WHERE s.listed ORDER BY s."lastActivityAt" DESC LIMIT threads
     )
    SELECT x.id, x."threadId", x.position, x.role::text, x.content, x."sourceRef", m.title, m."createdAt", x.tokens,
           (SELECT h.n FROM history h)
    FROM mine m CROSS JOIN LATERAL (
       SELECT i.* FROM "Item" i
       WHERE i."threadId" = m.id AND i.role IN ('user', 'assistant') AND i.status IN ('complete', 'stopped') AND i."createdAt" > m.since
       ORDER BY i.position DESC LIMIT per_thread
     ) x
    ORDER BY m."lastActivityAt" DESC, x.position DESC;
  END
  $$;
