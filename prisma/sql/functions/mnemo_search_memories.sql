-- mnemo_search_memories: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The user's active memories ranked by relevance to the words: each matching
-- word adds its inverse document frequency over the user's memories (BM25
-- without term frequency). Ranked on narrow rows; the wide columns are read for
-- the winners only. Each word's memories are listed through the index, stopping
-- at `common_words`: a word found in that many or more is left out when rarer ones
-- are asked (its weight is near zero, and it would make every memory a candidate);
-- the others' lists are the matches, so no memory is tested against each word's
-- query again (with related words, a word's query has dozens of alternatives). `since`: when
-- the memory became true (else when it was learned), the day the prompt files it under. `rank` is the share of the
-- question's whole weight a memory matches (a word no memory holds weighs as much as a word can), so it compares
-- with the passages' rank (mnemo_recall_passages): a memory matching only a common word ranks low.
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
     ), listed AS MATERIALIZED (
       SELECT term, q, ARRAY(SELECT m.id FROM "Memory" m WHERE m.search @@ t.q LIMIT common_words) AS ids
       FROM terms t WHERE numnode(q) > 0
     ), usable AS MATERIALIZED (
       SELECT term, q, ids, cardinality(ids) < common_words AS complete FROM listed
       WHERE cardinality(ids) < common_words OR NOT EXISTS (SELECT 1 FROM listed WHERE cardinality(ids) < common_words)
     ), matches AS MATERIALIZED (
       -- A word whose list is complete: its memories by id; a common word (asked only when every word is): the index.
       SELECT m.id, m."updatedAt", u.term FROM usable u CROSS JOIN unnest(u.ids) AS i(id) JOIN "Memory" m ON m.id = i.id
       WHERE u.complete AND m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project)
         AND (scope_private OR NOT m.private) AND m.status = 'active' AND NOT m.muted
         AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
       UNION ALL
       SELECT m.id, m."updatedAt", u.term FROM usable u JOIN "Memory" m ON m.search @@ u.q
       WHERE NOT u.complete AND m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project)
         AND (scope_private OR NOT m.private) AND m.status = 'active' AND NOT m.muted
         AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
     ), total AS MATERIALIZED (
       SELECT GREATEST(count(*), 1)::float8 AS n FROM "Memory" m WHERE m."userId" = uid AND ((scope_general AND m."projectId" IS NULL) OR m."projectId" = scope_project) AND m.status = 'active'
     ), idf AS MATERIALIZED (
       SELECT m.term, ln(1 + (total.n - count(*) + 0.5) / (count(*) + 0.5))
                        * CASE WHEN strpos(m.term, E'\x1F') > 0 THEN 0.5 ELSE 1 END AS w
       FROM matches m CROSS JOIN total GROUP BY m.term, total.n
     ), whole AS MATERIALIZED (
       SELECT GREATEST(sum(COALESCE(i.w, ln(1 + (total.n + 0.5) / 0.5)
                        * CASE WHEN strpos(u.term, E'\x1F') > 0 THEN 0.5 ELSE 1 END)), 1e-9)::float8 AS w
       FROM usable u CROSS JOIN total LEFT JOIN idf i ON i.term = u.term
     ), ranked AS MATERIALIZED (
       SELECT m.id, m."updatedAt", sum(idf.w)::float8 AS rank FROM matches m JOIN idf ON idf.term = m.term
       GROUP BY m.id, m."updatedAt" ORDER BY rank DESC, m."updatedAt" DESC, m.id LIMIT lim
     )
    SELECT d.id, d.text, d.kind::text, d.source::text, d.pinned, d.tokens, d."updatedAt", d."sourceRef", d."needsRevalidation", r.rank / (SELECT w FROM whole),
           COALESCE(d."validFrom", d."createdAt")
    FROM ranked r JOIN "Memory" d ON d.id = r.id
    ORDER BY r.rank DESC, r."updatedAt" DESC, r.id;
  END
  $$;
