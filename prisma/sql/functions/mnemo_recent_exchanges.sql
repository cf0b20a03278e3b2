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
              GREATEST(COALESCE(t."recallFrom", '-infinity'::timestamp), since) AS since
       FROM "Thread" t
       WHERE t."userId" = uid AND NOT t.temporary AND (exclude_thread IS NULL OR t.id <> exclude_thread)
         AND ((scope_general AND t."projectId" IS NULL) OR t."projectId" = scope_project)
         AND NOT t.private
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
