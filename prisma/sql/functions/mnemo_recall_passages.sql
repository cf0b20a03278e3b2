-- mnemo_recall_passages: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The best-matching messages from the user's other threads, each with its
-- neighbours. Ranked like BM25 without term frequency: each matching query word
-- adds its inverse document frequency over the user's messages, scaled down for
-- long messages (BM25's length normalisation, k1 = 1.2, b = 0.75), plus a bonus
-- for messages from a date the question names. How common each word is comes
-- from a fixed sample (the user's newest `sample_docs` messages), never from
-- reading its index entries. Words estimated in fewer than `common_docs`
-- messages count for the score, as a share of the weight of them all (so it compares with mnemo_search_memories'
-- rank); the rarest of them, while their estimated
-- messages add up to `fetch_rows`, are looked up in the index (at most
-- 2 x fetch_rows rows), so the rows read do not grow with the history. When
-- every word is common, the sample itself is searched. The current thread
-- is left out inside the index (its tag, migration thread_tagged_search), and
-- so, when the memory scope leaves threads out (a project's chat, or a chat
-- beside projects), is every thread outside it: by the tags of the threads in
-- scope when they are few, else of those outside when they are few. The
-- lookup's rows are then all in scope, and none is read only to be dropped.
CREATE OR REPLACE FUNCTION mnemo_recall_passages(
  uid text, exclude_thread text, lim int, n int, words text[], common_docs int, cfg regconfig, since timestamp,
  date_starts timestamp[], date_ends timestamp[], date_bonus float8, sample_docs int, fetch_rows int, scope_project text, scope_general boolean)
  RETURNS SETOF mnemo_passage_row
  LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan
  AS $$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH mine AS MATERIALIZED (
       SELECT * FROM mnemo_searchable_threads(uid, exclude_thread, since, scope_project, scope_general)
     ), outside AS MATERIALIZED (
       -- The user's threads the scope leaves out (besides exclude_thread), at most 33 of them: enough to choose.
       SELECT t.id FROM "Thread" t
       WHERE t."userId" = uid AND NOT t.temporary AND (exclude_thread IS NULL OR t.id <> exclude_thread)
         AND NOT EXISTS (SELECT 1 FROM mine m WHERE m.id = t.id)
       LIMIT 33
     ), place AS MATERIALIZED (
       SELECT CASE
         WHEN NOT EXISTS (SELECT 1 FROM outside) THEN NULL
         WHEN (SELECT count(*) FROM mine) BETWEEN 1 AND 32 THEN
           (SELECT string_agg('''' || mnemo_thread_tag(m.id) || '''', ' | ')::tsquery FROM mine m)
         WHEN (SELECT count(*) FROM outside) <= 32 THEN
           !! (SELECT string_agg('''' || mnemo_thread_tag(o.id) || '''', ' | ')::tsquery FROM outside o)
       END AS keep
     ), terms AS MATERIALIZED (
       SELECT w AS term, mnemo_term_query(uid, cfg, w) AS q FROM unnest(words) AS w
     ), usable AS MATERIALIZED (
       SELECT term, q AS anywhere,
              CASE WHEN p.keep IS NOT NULL AND exclude_thread IS NULL THEN q && p.keep
                   WHEN p.keep IS NOT NULL THEN q && mnemo_not_thread(exclude_thread) && p.keep
                   WHEN exclude_thread IS NULL THEN q ELSE q && mnemo_not_thread(exclude_thread) END AS q
       FROM terms CROSS JOIN place p WHERE numnode(q) > 0
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
     ), whole AS MATERIALIZED (
       SELECT GREATEST(sum(ln(1 + (total.n - c.df + 0.5) / (c.df + 0.5))), 1e-9)::float8 AS w FROM chosen c CROSS JOIN total
     ), hits AS MATERIALIZED (
       SELECT d.id,
              (sum(ln(1 + (total.n - c.df + 0.5) / (c.df + 0.5)))
                 * ((1.2 + 1) / (1 + 1.2 * (0.25 + 0.75 * d.tokens / (SELECT GREATEST(avg(tokens), 1) FROM docs))))
               + CASE WHEN EXISTS (SELECT 1 FROM unnest(date_starts, date_ends) AS r(s, e) WHERE d."createdAt" >= r.s AND d."createdAt" < r.e)
                      THEN date_bonus ELSE 0 END)::float8 / (SELECT w FROM whole) AS rank
       FROM docs d JOIN chosen c ON d.search @@ c.q CROSS JOIN total
       GROUP BY d.id, d."threadId", d.position, d.tokens, d."createdAt"
       ORDER BY rank DESC, d.position DESC LIMIT lim
     )
    SELECT * FROM mnemo_hits_with_neighbours(uid, exclude_thread,
      ARRAY(SELECT h.id FROM hits h ORDER BY h.rank DESC, h.id), ARRAY(SELECT h.rank FROM hits h ORDER BY h.rank DESC, h.id), n, since, scope_project, scope_general, lim);
  END
  $$;
