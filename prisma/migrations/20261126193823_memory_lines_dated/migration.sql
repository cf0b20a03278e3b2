DROP FUNCTION mnemo_memory_profile(text,integer,integer,integer,integer,integer,text,boolean,boolean);

DROP FUNCTION mnemo_search_memories(text,integer,text[],regconfig,integer,text,boolean,boolean);

-- from prisma/sql/functions/mnemo_memory_profile.sql
-- mnemo_memory_profile: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
CREATE OR REPLACE FUNCTION mnemo_memory_profile(uid text, lim int, line_overhead int, fit_budget int, core_lim int, core_budget int,
                                                scope_project text, scope_general boolean,
                                                scope_private boolean)
  RETURNS TABLE (id text, text text, kind text, source text, pinned boolean, tokens int, "sourceRef" text,
                 "needsRevalidation" boolean, n int, cost int, uses int, since timestamp(3))
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  DECLARE
    total_n int := 0;
    total_cost int := 0;
    t int;
  BEGIN
    FOR t IN SELECT m.tokens FROM "Memory" m
             WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND (scope_private OR NOT m.private) AND m.status = 'active' AND NOT m.muted AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
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
              COALESCE(m."lastUsedAt", m."updatedAt") AS seen, COALESCE(m."validFrom", m."createdAt") AS since
        FROM "Memory" m WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND (scope_private OR NOT m.private) AND m.status = 'active' AND NOT m.muted AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
        ORDER BY m.pinned DESC, (m.source IN ('explicit', 'manual')) DESC, m."useCount" DESC, seen DESC, m.id COLLATE "C"
        LIMIT lim
      )
      SELECT s.id, s.text, s.kind::text, s.source::text, s.pinned, s.tokens, s."sourceRef", s."needsRevalidation",
             total_n, total_cost, s."useCount", s.since
      FROM (SELECT 1) one LEFT JOIN shown s ON true
      ORDER BY s.pinned DESC, (s.source IN ('explicit', 'manual')) DESC, s."useCount" DESC, s.seen DESC, s.id COLLATE "C";
      RETURN;
    END IF;
    RETURN QUERY
    WITH kept AS (
      SELECT c.* FROM (VALUES (true, 'explicit'::"MemorySource", 0), (true, 'manual', 0), (true, 'inferred', 0),
                              (false, 'explicit', 0), (false, 'manual', 0), (false, 'inferred', 1)) AS g(pinned, source, min_uses)
      CROSS JOIN LATERAL (
        -- General memory and the project's, each read through the (userId, projectId, ...) index in use order:
        -- one OR over both would walk every memory of the user past the ones out of scope.
        SELECT p.* FROM (
          (SELECT m.id, m.text, m.kind, m.source, m.pinned, m.tokens, m."sourceRef", m."needsRevalidation", m."useCount",
                  COALESCE(m."lastUsedAt", m."updatedAt") AS seen, COALESCE(m."validFrom", m."createdAt") AS since
           FROM "Memory" m
           WHERE scope_general AND m."userId" = uid AND m."projectId" IS NULL AND m.status = 'active' AND m.pinned = g.pinned
             AND m.source = g.source AND NOT m.muted AND (scope_private OR NOT m.private)
             AND m."useCount" >= g.min_uses AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
           ORDER BY m."useCount" DESC LIMIT core_lim)
          UNION ALL
          (SELECT m.id, m.text, m.kind, m.source, m.pinned, m.tokens, m."sourceRef", m."needsRevalidation", m."useCount",
                  COALESCE(m."lastUsedAt", m."updatedAt") AS seen, COALESCE(m."validFrom", m."createdAt") AS since
           FROM "Memory" m
           WHERE scope_project IS NOT NULL AND m."userId" = uid AND m."projectId" = scope_project AND m.status = 'active'
             AND m.pinned = g.pinned AND m.source = g.source AND NOT m.muted AND (scope_private OR NOT m.private)
             AND m."useCount" >= g.min_uses AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
           ORDER BY m."useCount" DESC LIMIT core_lim)
        ) p
        ORDER BY p."useCount" DESC, p.seen DESC, p.id COLLATE "C"
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
           total_n, total_cost, k."useCount", k.since
    FROM (SELECT 1) one LEFT JOIN costed k ON k.pinned OR core_budget IS NULL OR k.before < core_budget
    ORDER BY k.pinned DESC, (k.source IN ('explicit', 'manual')) DESC, k."useCount" DESC, k.seen DESC, k.id COLLATE "C";
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
-- weight is near zero, and it would make every memory a candidate. `since`: when
-- the memory became true (else when it was learned), the day the prompt files it under.
CREATE OR REPLACE FUNCTION mnemo_search_memories(uid text, lim int, words text[], cfg regconfig, common_words int,
                                                 scope_project text, scope_general boolean,
                                                 scope_private boolean)
  RETURNS TABLE (id text, text text, kind text, source text, pinned boolean, tokens int, "updatedAt" timestamp(3),
                 "sourceRef" text, "needsRevalidation" boolean, rank float8, since timestamp(3))
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH terms AS MATERIALIZED (
       SELECT mnemo_term_query(uid, cfg, w) AS q, w AS term FROM unnest(words) AS w
     ), counted AS MATERIALIZED (
       SELECT term, q, (SELECT count(*) FROM (SELECT 1 FROM "Memory" m WHERE m.search @@ t.q LIMIT common_words) x) AS seen
       FROM terms t WHERE numnode(q) > 0
     ), usable AS MATERIALIZED (
       SELECT term, q FROM counted WHERE seen < common_words OR NOT EXISTS (SELECT 1 FROM counted WHERE seen < common_words)
     ), docs AS MATERIALIZED (
       SELECT m.id, m."updatedAt", m.search FROM "Memory" m
       WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND (scope_private OR NOT m.private) AND m.status = 'active' AND NOT m.muted AND m.search @@ (SELECT string_agg('(' || q::text || ')', ' | ')::tsquery FROM usable)
         AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
     ), matches AS MATERIALIZED (
       SELECT d.id, d."updatedAt", u.term FROM docs d JOIN usable u ON d.search @@ u.q
     ), total AS MATERIALIZED (
       SELECT GREATEST(count(*), 1)::float8 AS n FROM "Memory" m WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND m.status = 'active'
     ), idf AS MATERIALIZED (
       SELECT m.term, ln(1 + (total.n - count(*) + 0.5) / (count(*) + 0.5))
                        * CASE WHEN strpos(m.term, E'\x1F') > 0 THEN 0.5 ELSE 1 END AS w
       FROM matches m CROSS JOIN total GROUP BY m.term, total.n
     ), ranked AS MATERIALIZED (
       SELECT m.id, m."updatedAt", sum(idf.w)::float8 AS rank FROM matches m JOIN idf ON idf.term = m.term
       GROUP BY m.id, m."updatedAt" ORDER BY rank DESC, m."updatedAt" DESC LIMIT lim
     )
    SELECT d.id, d.text, d.kind::text, d.source::text, d.pinned, d.tokens, d."updatedAt", d."sourceRef", d."needsRevalidation", r.rank,
           COALESCE(d."validFrom", d."createdAt")
    FROM ranked r JOIN "Memory" d ON d.id = r.id
    ORDER BY r.rank DESC, r."updatedAt" DESC;
  END
  $$;
