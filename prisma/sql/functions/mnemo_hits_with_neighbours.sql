-- mnemo_hits_with_neighbours: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- At most `lim` hits (the best ranked) that pass the filters are read with their neighbours: a vector search fetches
-- extra hits in case the filters drop some, and reading the neighbours of all of them cost more than the search.
CREATE OR REPLACE FUNCTION mnemo_hits_with_neighbours(uid text, exclude_thread text, hit_ids text[], hit_ranks float8[], n int, since timestamp,
                                                      scope_project text, scope_general boolean, lim int)
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
       ORDER BY x.rank DESC, h.id LIMIT lim
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
