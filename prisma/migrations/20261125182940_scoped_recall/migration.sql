DROP FUNCTION mnemo_hits_with_neighbours(uid text, exclude_thread text, hit_ids text[], hit_ranks double precision[], n integer, since timestamp without time zone);

DROP FUNCTION mnemo_memory_profile(uid text, lim integer, line_overhead integer, fit_budget integer, core_lim integer, core_budget integer);

DROP FUNCTION mnemo_recall_passages(uid text, exclude_thread text, lim integer, n integer, words text[], common_docs integer, cfg regconfig, since timestamp without time zone, date_starts timestamp without time zone[], date_ends timestamp without time zone[], date_bonus double precision, sample_docs integer, fetch_rows integer);

DROP FUNCTION mnemo_recent_exchanges(uid text, exclude_thread text, since timestamp without time zone, threads integer, per_thread integer, cap_tokens integer, line_cap integer);

DROP FUNCTION mnemo_search_memories(uid text, lim integer, words text[], cfg regconfig, common_words integer);

DROP FUNCTION mnemo_searchable_threads(uid text, exclude_thread text, since timestamp without time zone);

-- from prisma/sql/functions/mnemo_hits_with_neighbours.sql
-- mnemo_hits_with_neighbours: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
CREATE OR REPLACE FUNCTION mnemo_hits_with_neighbours(uid text, exclude_thread text, hit_ids text[], hit_ranks float8[], n int, since timestamp,
                                                      scope_project text, scope_general boolean)
  RETURNS SETOF mnemo_passage_row
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH mine AS MATERIALIZED (
       SELECT * FROM mnemo_searchable_threads(uid, exclude_thread, since, scope_project, scope_general)
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

-- from prisma/sql/functions/mnemo_memory_profile.sql
-- mnemo_memory_profile: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
CREATE OR REPLACE FUNCTION mnemo_memory_profile(uid text, lim int, line_overhead int, fit_budget int, core_lim int, core_budget int,
                                                scope_project text, scope_general boolean)
  RETURNS TABLE (id text, text text, kind text, source text, pinned boolean, tokens int, "sourceRef" text,
                 "needsRevalidation" boolean, n int, cost int, uses int)
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  DECLARE
    total_n int := 0;
    total_cost int := 0;
    t int;
  BEGIN
    FOR t IN SELECT m.tokens FROM "Memory" m
             WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND m.status = 'active' AND NOT m.muted AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
    LOOP
      total_n := total_n + 1;
      total_cost := total_cost + t + line_overhead;
      EXIT WHEN fit_budget IS NOT NULL AND total_cost > fit_budget;
    END LOOP;
    -- One row at least, so the totals come back when no memory does.
    IF fit_budget IS NULL OR total_cost <= fit_budget THEN
      RETURN QUERY
      WITH shown AS (
        SELECT m.id, m.text, m.kind, m.source, m.pinned, m.tokens, m."sourceRef", m."needsRevalidation", m."useCount",
              COALESCE(m."lastUsedAt", m."updatedAt") AS seen
        FROM "Memory" m WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND m.status = 'active' AND NOT m.muted AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
        ORDER BY m.pinned DESC, (m.source IN ('explicit', 'manual')) DESC, m."useCount" DESC, seen DESC, m.id COLLATE "C"
        LIMIT lim
      )
      SELECT s.id, s.text, s.kind::text, s.source::text, s.pinned, s.tokens, s."sourceRef", s."needsRevalidation",
             total_n, total_cost, s."useCount"
      FROM (SELECT 1) one LEFT JOIN shown s ON true
      ORDER BY s.pinned DESC, (s.source IN ('explicit', 'manual')) DESC, s."useCount" DESC, s.seen DESC, s.id COLLATE "C";
      RETURN;
    END IF;
    RETURN QUERY
    WITH kept AS (
      SELECT c.* FROM (VALUES (true, 'explicit'::"MemorySource", 0), (true, 'manual', 0), (true, 'inferred', 0),
                              (false, 'explicit', 0), (false, 'manual', 0), (false, 'inferred', 1)) AS g(pinned, source, min_uses)
      CROSS JOIN LATERAL (
        SELECT m.id, m.text, m.kind, m.source, m.pinned, m.tokens, m."sourceRef", m."needsRevalidation", m."useCount",
                     COALESCE(m."lastUsedAt", m."updatedAt") AS seen
        FROM "Memory" m
        WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND m.status = 'active' AND NOT m.muted AND m.pinned = g.pinned AND m.source = g.source
          AND m."useCount" >= g.min_uses AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
        ORDER BY m."useCount" DESC, seen DESC, m.id COLLATE "C"
        LIMIT core_lim
      ) c
      ORDER BY c.pinned DESC, (c.source IN ('explicit', 'manual')) DESC, c."useCount" DESC, c.seen DESC, c.id COLLATE "C"
      LIMIT core_lim
    ), costed AS (
      -- What the unpinned rows before each one cost.
      SELECT k.*, COALESCE(sum(CASE WHEN k.pinned THEN 0 ELSE k.tokens + line_overhead END) OVER (
               ORDER BY k.pinned DESC, (k.source IN ('explicit', 'manual')) DESC, k."useCount" DESC, k.seen DESC,
                        k.id COLLATE "C" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
      FROM kept k
    )
    SELECT k.id, k.text, k.kind::text, k.source::text, k.pinned, k.tokens, k."sourceRef", k."needsRevalidation",
           total_n, total_cost, k."useCount"
    FROM (SELECT 1) one LEFT JOIN costed k ON k.pinned OR core_budget IS NULL OR k.before < core_budget
    ORDER BY k.pinned DESC, (k.source IN ('explicit', 'manual')) DESC, k."useCount" DESC, k.seen DESC, k.id COLLATE "C";
  END
  $$;

-- from prisma/sql/functions/mnemo_recall_passages.sql
-- mnemo_recall_passages: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The best-matching messages from the user's other threads, each with its
-- neighbours. Ranked like BM25 without term frequency: each matching query word
-- adds its inverse document frequency over the user's messages, scaled down for
-- long messages (BM25's length normalisation, k1 = 1.2, b = 0.75), plus a bonus
-- for messages from a date the question names. How common each word is comes
-- from a fixed sample (the user's newest `sample_docs` messages), never from
-- reading its index entries. Words estimated in fewer than `common_docs`
-- messages count for the score; the rarest of them, while their estimated
-- messages add up to `fetch_rows`, are looked up in the index (at most
-- 2 x fetch_rows rows), so the rows read do not grow with the history. When
-- every word is common, the sample itself is searched. The current thread
-- is left out inside the index (its tag, migration thread_tagged_search).
CREATE OR REPLACE FUNCTION mnemo_recall_passages(
  uid text, exclude_thread text, lim int, n int, words text[], common_docs int, cfg regconfig, since timestamp,
  date_starts timestamp[], date_ends timestamp[], date_bonus float8, sample_docs int, fetch_rows int, scope_project text, scope_general boolean)
  RETURNS SETOF mnemo_passage_row
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH terms AS MATERIALIZED (
       SELECT w AS term, mnemo_user_query(uid, cfg, w) AS q FROM unnest(words) AS w
     ), usable AS MATERIALIZED (
       SELECT term, q AS anywhere, CASE WHEN exclude_thread IS NULL THEN q ELSE q && mnemo_not_thread(exclude_thread) END AS q
       FROM terms WHERE numnode(q) > 0
     ), mine AS MATERIALIZED (
       SELECT * FROM mnemo_searchable_threads(uid, exclude_thread, since, scope_project, scope_general)
     ), total AS MATERIALIZED (
       -- The user's message count, cheaply: positions handed out per thread.
       SELECT GREATEST(sum("nextPosition"), 1)::float8 AS n FROM "Thread" WHERE "userId" = uid
     ), sample AS MATERIALIZED (
       SELECT i.id, i."threadId", i.position, i.search, i.tokens, i."createdAt" FROM "Item" i
       WHERE i."userId" = uid AND i.role IN ('user', 'assistant') ORDER BY i."createdAt" DESC LIMIT sample_docs
     ), estimate AS MATERIALIZED (
       -- Matches in the sample, scaled to the whole history (at least 0.5, so no word is free).
       SELECT u.term, u.q,
              GREATEST(count(s.id), 0.5) * (SELECT total.n FROM total) / GREATEST((SELECT count(*) FROM sample), 1) AS df
       FROM usable u LEFT JOIN sample s ON s.search @@ u.anywhere GROUP BY u.term, u.q
     ), searchable AS MATERIALIZED (
       SELECT term, q, df FROM estimate WHERE df < common_docs
     ), rare AS MATERIALIZED (
       -- The rarest words, while their estimated messages add up to fetch_rows (the rarest always).
       SELECT term, q, df FROM (SELECT term, q, df, sum(df) OVER (ORDER BY df, term) AS running FROM searchable) x
       WHERE running <= fetch_rows OR running = df
     ), docs AS MATERIALIZED (
       SELECT i.id, i."threadId", i.position, i.search, i.tokens, i."createdAt"
       FROM mnemo_search_items((SELECT string_agg('(' || q::text || ')', ' | ')::tsquery FROM rare), fetch_rows * 2) i
       JOIN mine m ON m.id = i."threadId"
       WHERE EXISTS (SELECT 1 FROM rare) AND i.role IN ('user', 'assistant') AND i."createdAt" > m.since
       UNION ALL
       SELECT s.id, s."threadId", s.position, s.search, s.tokens, s."createdAt" FROM sample s JOIN mine m ON m.id = s."threadId"
       WHERE NOT EXISTS (SELECT 1 FROM rare)
         AND s.search @@ (SELECT string_agg('(' || q::text || ')', ' | ')::tsquery FROM estimate) AND s."createdAt" > m.since
     ), chosen AS MATERIALIZED (
       -- Scored by every word that is not common, whichever found the message.
       SELECT term, q, df FROM searchable UNION ALL SELECT term, q, df FROM estimate WHERE NOT EXISTS (SELECT 1 FROM rare)
     ), hits AS MATERIALIZED (
       SELECT d.id,
              (sum(ln(1 + (total.n - c.df + 0.5) / (c.df + 0.5)))
                 * ((1.2 + 1) / (1 + 1.2 * (0.25 + 0.75 * d.tokens / (SELECT GREATEST(avg(tokens), 1) FROM docs))))
               + CASE WHEN EXISTS (SELECT 1 FROM unnest(date_starts, date_ends) AS r(s, e) WHERE d."createdAt" >= r.s AND d."createdAt" < r.e)
                      THEN date_bonus ELSE 0 END)::float8 AS rank
       FROM docs d JOIN chosen c ON d.search @@ c.q CROSS JOIN total
       GROUP BY d.id, d."threadId", d.position, d.tokens, d."createdAt"
       ORDER BY rank DESC, d.position DESC LIMIT lim
     )
    SELECT * FROM mnemo_hits_with_neighbours(uid, exclude_thread,
      ARRAY(SELECT h.id FROM hits h ORDER BY h.rank DESC, h.id), ARRAY(SELECT h.rank FROM hits h ORDER BY h.rank DESC, h.id), n, since, scope_project, scope_general);
  END
  $$;

-- from prisma/sql/functions/mnemo_recent_exchanges.sql
-- mnemo_recent_exchanges: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
CREATE OR REPLACE FUNCTION mnemo_recent_exchanges(uid text, exclude_thread text, since timestamp, threads int, per_thread int,
                                       cap_tokens int, line_cap int, scope_project text, scope_general boolean)
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
         AND ((scope_general AND t."projectId" IS NULL) OR t."projectId" = scope_project)
     ), history AS MATERIALIZED (
       SELECT COALESCE(sum(s."nextPosition"), 0)::int AS n FROM searchable s
     ), mine AS MATERIALIZED (
       SELECT * FROM searchable s WHERE s.listed ORDER BY s."lastActivityAt" DESC LIMIT threads
     )
    SELECT x.id, x."threadId", x.position, x.role::text, x.content, x."sourceRef", m.title, m."createdAt", x.tokens,
           (SELECT h.n FROM history h)
    FROM mine m CROSS JOIN LATERAL (
       -- The running sum over the newest per_thread rows only (a window over the whole thread would read it all).
       SELECT y.*, COALESCE(sum(LEAST(y.tokens, line_cap)) OVER (ORDER BY y.position DESC
                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
       FROM (
         SELECT i.id, i."threadId", i.position, i.role, i.content, i."sourceRef", i.tokens FROM "Item" i
         WHERE i."threadId" = m.id AND i.role IN ('user', 'assistant') AND i.status IN ('complete', 'stopped')
           AND i."createdAt" > m.since
         ORDER BY i.position DESC LIMIT per_thread
       ) y
     ) x
    WHERE cap_tokens IS NULL OR x.before < cap_tokens
    ORDER BY m."lastActivityAt" DESC, x.position DESC;
  END
  $$;

-- from prisma/sql/functions/mnemo_search_memories.sql
-- mnemo_search_memories: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The user's active memories ranked by relevance to the words: each matching
-- word adds its inverse document frequency over the user's memories (BM25
-- without term frequency). Ranked on narrow rows; the wide columns are read for
-- the winners only. A word found in `common_words` memories or more (counted
-- through the index, stopping there) is left out when rarer ones are asked: its
-- weight is near zero, and it would make every memory a candidate.
CREATE OR REPLACE FUNCTION mnemo_search_memories(uid text, lim int, words text[], cfg regconfig, common_words int,
                                                 scope_project text, scope_general boolean)
  RETURNS TABLE (id text, text text, kind text, source text, pinned boolean, tokens int, "updatedAt" timestamp(3),
                 "sourceRef" text, "needsRevalidation" boolean, rank float8)
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH terms AS MATERIALIZED (
       SELECT mnemo_user_query(uid, cfg, w) AS q, w AS term FROM unnest(words) AS w
     ), counted AS MATERIALIZED (
       SELECT term, q, (SELECT count(*) FROM (SELECT 1 FROM "Memory" m WHERE m.search @@ t.q LIMIT common_words) x) AS seen
       FROM terms t WHERE numnode(q) > 0
     ), usable AS MATERIALIZED (
       SELECT term, q FROM counted WHERE seen < common_words OR NOT EXISTS (SELECT 1 FROM counted WHERE seen < common_words)
     ), docs AS MATERIALIZED (
       SELECT m.id, m."updatedAt", m.search FROM "Memory" m
       WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND m.status = 'active' AND NOT m.muted AND m.search @@ (SELECT string_agg('(' || q::text || ')', ' | ')::tsquery FROM usable)
         AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
     ), matches AS MATERIALIZED (
       SELECT d.id, d."updatedAt", u.term FROM docs d JOIN usable u ON d.search @@ u.q
     ), total AS MATERIALIZED (
       SELECT GREATEST(count(*), 1)::float8 AS n FROM "Memory" m WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND m.status = 'active'
     ), idf AS MATERIALIZED (
       SELECT m.term, ln(1 + (total.n - count(*) + 0.5) / (count(*) + 0.5)) AS w FROM matches m CROSS JOIN total GROUP BY m.term, total.n
     ), ranked AS MATERIALIZED (
       SELECT m.id, m."updatedAt", sum(idf.w)::float8 AS rank FROM matches m JOIN idf ON idf.term = m.term
       GROUP BY m.id, m."updatedAt" ORDER BY rank DESC, m."updatedAt" DESC LIMIT lim
     )
    SELECT d.id, d.text, d.kind::text, d.source::text, d.pinned, d.tokens, d."updatedAt", d."sourceRef", d."needsRevalidation", r.rank
    FROM ranked r JOIN "Memory" d ON d.id = r.id
    ORDER BY r.rank DESC, r."updatedAt" DESC;
  END
  $$;

-- from prisma/sql/functions/mnemo_searchable_threads.sql
-- mnemo_searchable_threads: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The threads recall may search: the user's own, not temporary, not
-- `exclude_thread`, each with the time its messages count from (the later of
-- "forget me" and `since`), in the memory scope (lib/projects/scope.ts).
CREATE OR REPLACE FUNCTION mnemo_searchable_threads(uid text, exclude_thread text, since timestamp, scope_project text,
                                                    scope_general boolean)
  RETURNS TABLE (id text, title text, "createdAt" timestamp, since timestamp)
  LANGUAGE sql STABLE
  AS $$
    SELECT t.id, t.title, t."createdAt", GREATEST(COALESCE(u."memoryResetAt", '-infinity'::timestamp), since)
    FROM "Thread" t JOIN "User" u ON u.id = t."userId"
    WHERE t."userId" = uid AND NOT t.temporary AND (exclude_thread IS NULL OR t.id <> exclude_thread)
      AND ((scope_general AND t."projectId" IS NULL) OR t."projectId" = scope_project)
  $$;
