-- Recall's reads bounded by what can go in, not by row counts alone.
--
-- The memory profile past the budget read up to core_lim rows of the core set
-- (as many of the shortest possible lines as its share holds: 80 at 800
-- tokens), though only the share's worth of tokens can go in. Now it returns
-- the core set's rows while the earlier unpinned ones cost less than
-- core_budget (pinned ones always, up to core_lim): the row that crosses it
-- comes too, the rest stay in the database.
DROP FUNCTION mnemo_memory_profile(text, int, int, int, int);
CREATE FUNCTION mnemo_memory_profile(uid text, lim int, line_overhead int, fit_budget int, core_lim int, core_budget int)
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
             WHERE m."userId" = uid AND m.status = 'active' AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
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
        FROM "Memory" m WHERE m."userId" = uid AND m.status = 'active' AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
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
        WHERE m."userId" = uid AND m.status = 'active' AND m.pinned = g.pinned AND m.source = g.source
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

-- The recent exchanges filled unused budget from up to `threads` threads x
-- `per_thread` messages whatever their size (with long imported answers, over
-- a megabyte a turn, nearly all of it thrown away). Now each thread's newest
-- messages come while those before them show fewer than cap_tokens (each
-- counted up to line_cap, as recall shows it): the one that crosses it comes
-- too, since recall may excerpt it.
DROP FUNCTION mnemo_recent_exchanges(text, text, timestamp, int, int);
CREATE FUNCTION mnemo_recent_exchanges(uid text, exclude_thread text, since timestamp, threads int, per_thread int,
                                       cap_tokens int, line_cap int)
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
