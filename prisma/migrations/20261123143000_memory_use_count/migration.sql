-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "useCount" INTEGER NOT NULL DEFAULT 0;


-- The counts so far.
UPDATE "Memory" m SET "useCount" = u.n
FROM (SELECT "memoryId", count(*)::int AS n FROM "MemoryUse" GROUP BY "memoryId") u
WHERE u."memoryId" = m.id;

-- The profile reads the kept count instead of grouping the user's MemoryUse
-- rows every turn (one per memory per answer: 100,000 rows took 29 ms a turn).
-- When the memories exceed fit_budget, at most core_lim rows are read: only
-- the core set's share of the budget can go in then.
DROP FUNCTION mnemo_memory_profile(text, int, int, int);
CREATE FUNCTION mnemo_memory_profile(uid text, lim int, line_overhead int, fit_budget int, core_lim int)
  RETURNS TABLE (id text, text text, kind text, source text, pinned boolean, tokens int, "sourceRef" text,
                 "needsRevalidation" boolean, n int, cost int, uses int)
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH active AS MATERIALIZED (
       SELECT m.id, m.source::text AS source, m.pinned, m.tokens, m."useCount" AS uses,
              COALESCE(m."lastUsedAt", m."updatedAt") AS seen
       FROM "Memory" m WHERE m."userId" = uid AND m.status = 'active' AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
     ), totals AS MATERIALIZED (
       SELECT count(*)::int AS n, COALESCE(sum(a.tokens + line_overhead), 0)::int AS cost FROM active a
     ), kept AS MATERIALIZED (
       SELECT a.id, a.pinned, a.source, a.seen, a.uses
       FROM active a
       WHERE fit_budget IS NULL OR (SELECT t.cost FROM totals t) <= fit_budget
          OR a.pinned OR a.source <> 'inferred' OR a.uses > 0
       ORDER BY a.pinned DESC, (a.source IN ('explicit', 'manual')) DESC, a.uses DESC, a.seen DESC, a.id COLLATE "C"
       LIMIT CASE WHEN fit_budget IS NULL OR (SELECT t.cost FROM totals t) <= fit_budget THEN lim ELSE core_lim END
     )
    SELECT m.id, m.text, m.kind::text, m.source::text, m.pinned, m.tokens, m."sourceRef", m."needsRevalidation",
           t.n, t.cost, k.uses
    FROM totals t LEFT JOIN kept k ON true LEFT JOIN "Memory" m ON m.id = k.id
    ORDER BY k.pinned DESC, (k.source IN ('explicit', 'manual')) DESC, k.uses DESC, k.seen DESC, k.id COLLATE "C";
  END
  $$;
