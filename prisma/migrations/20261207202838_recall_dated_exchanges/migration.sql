-- from prisma/sql/functions/mnemo_dated_exchanges.sql
-- mnemo_dated_exchanges: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- What was said on the days a question names, for a question about a time rather than a topic ("What did we talk
-- about yesterday?", lib/memory/recall.ts): the finished messages of the threads recall may read (the same filters as
-- mnemo_recent_exchanges) written in any of the ranges, nearest the middle of their range first (a day named comes
-- with a day's slack either side: the day itself, then its neighbours), at most max_rows of them, while those before
-- them show less than cap_tokens (a line shows at most line_cap). Planned for each call: with the user and the ranges
-- unknown, the generic plan read every message of the user's (18 ms for 20,000 on PGlite, against 3 ms planned).
CREATE OR REPLACE FUNCTION mnemo_dated_exchanges(uid text, exclude_thread text, since timestamp, starts timestamp[],
                                       ends timestamp[], max_rows int, cap_tokens int, line_cap int,
                                       scope_project text, scope_general boolean)
  RETURNS TABLE (id text, "threadId" text, "position" int, role text, content text, "sourceRef" text, title text,
                 "createdAt" timestamp(3), tokens int)
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_custom_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH searchable AS MATERIALIZED (
       SELECT t.id, t.title, GREATEST(COALESCE(t."recallFrom", '-infinity'::timestamp), since) AS since
       FROM "Thread" t
       WHERE t."userId" = uid AND NOT t.temporary AND (exclude_thread IS NULL OR t.id <> exclude_thread)
         AND ((scope_general AND t."projectId" IS NULL) OR t."projectId" = scope_project)
         AND NOT t.private
     ), inside AS MATERIALIZED (
       -- Each range read on its own, outward from its middle both ways on the index on ("userId", "createdAt"): the
       -- max_rows nearest each side, however many the range holds (a month named without its year is one in each of
       -- ten years). Their text is read only for the max_rows kept.
       SELECT n.*, abs(extract(epoch FROM n."createdAt" - r.mid)) AS away
       FROM (SELECT a, b, a + (b - a) / 2 AS mid FROM unnest(starts, ends) AS u(a, b)) r
       CROSS JOIN LATERAL (
         (SELECT i.id, i.position, i."createdAt", i.tokens, s.title
          FROM "Item" i JOIN searchable s ON s.id = i."threadId"
          WHERE i."userId" = uid AND i."createdAt" >= r.mid AND i."createdAt" < r.b AND i."createdAt" > s.since
            AND i.role IN ('user', 'assistant') AND i.status IN ('complete', 'stopped')
          ORDER BY i."createdAt" LIMIT max_rows)
         UNION ALL
         (SELECT i.id, i.position, i."createdAt", i.tokens, s.title
          FROM "Item" i JOIN searchable s ON s.id = i."threadId"
          WHERE i."userId" = uid AND i."createdAt" >= r.a AND i."createdAt" < r.mid AND i."createdAt" > s.since
            AND i.role IN ('user', 'assistant') AND i.status IN ('complete', 'stopped')
          ORDER BY i."createdAt" DESC LIMIT max_rows)
       ) n
     ), said AS MATERIALIZED (
       SELECT DISTINCT ON (n.id) n.* FROM inside n ORDER BY n.id, n.away
     ), nearest AS MATERIALIZED (
       SELECT d.* FROM said d ORDER BY d.away, d."createdAt" DESC, d.position DESC LIMIT max_rows
     )
    SELECT i.id, i."threadId", i.position, i.role::text, i.content, i."sourceRef", x.title, i."createdAt", i.tokens
    FROM (
       SELECT d.*, COALESCE(sum(LEAST(d.tokens, line_cap)) OVER (ORDER BY d.away, d."createdAt" DESC, d.position DESC
                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
       FROM nearest d
     ) x JOIN "Item" i ON i.id = x.id
    WHERE x.before < cap_tokens
    ORDER BY x.away, x."createdAt" DESC, x.position DESC;
  END
  $$;
