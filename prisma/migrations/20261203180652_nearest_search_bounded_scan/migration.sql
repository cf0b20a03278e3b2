-- from prisma/sql/functions/mnemo_nearest_messages.sql
-- mnemo_nearest_messages: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- pgvector's search of a user's messages nearest to a vector (lib/memory/vectors.ts, PgvectorIndex), best first,
-- outside `p_exclude`; given a scope, only messages recall may read (mnemo_searchable_threads: in those threads, after
-- each thread's `since`), filtered in the search so that its first k are the k that count (a search of all threads
-- needed three times as many, and its cost grows with k). A function, so it goes out in the turn's batched read
-- (lib/db/function-calls.ts) with the iterative index scan set for its own run (a transaction with SET LOCAL took four round trips). Dynamic SQL: a
-- vector's size is a type modifier, which cannot be a parameter, and the partial HNSW index per size
-- (hnswIndexName) matches only a literal. Only called where the extension is installed.
-- The HNSW index answers the search; relaxed_order lets it keep scanning past other users' rows, so the query re-sorts.
-- The index holds each vector once: identical vectors form a group the graph search cannot leave, which hides other
-- rows from it, so a row whose vector another row holds is a copy, left out of the index. The user's copies, when
-- there are any, are ranked exactly, once per distinct vector (`copy_keys`: each key's distance read from one of the
-- user's rows holding it, which also checks the model and size), then read back as rows (`copies`) and merged with the
-- index's. The index stays approximate: when it yields fewer rows than asked (a user with few, or a scan that gave up)
-- all the user's rows are ranked exactly instead. Each is its own statement, planned only when needed: the usual
-- turn (no copies, enough rows) plans the index search alone (planning the three together cost about 0.5 ms more).
-- The index holds every user's vectors: with few of its rows passing the filter (a project whose chats have few
-- vectors, the user's other chats thousands; one user among many) the iterative scan would visit up to 20,000 rows
-- (55 ms for 10,000) before giving up. Visiting a row costs about as much as ranking one exactly (5.5 and 4 µs), so
-- past about 5·√(rows in the index) visits (1,000 at least) the exact ranking of the rows that pass is the cheaper
-- way: the scan stops there and they are ranked exactly.
CREATE OR REPLACE FUNCTION mnemo_nearest_messages(p_user text, p_model text, p_vector text, p_dims integer,
                                                  p_k integer, p_exclude text, p_since timestamp,
                                                  p_scope_project text, p_scope_general boolean)
RETURNS TABLE (id text, score float8)
LANGUAGE plpgsql STABLE SET hnsw.iterative_scan = relaxed_order SET hnsw.max_scan_tuples = 1000 AS $$
DECLARE
  threads text[];
  -- Threads whose messages count from later than `p_since` ("forget me" for a thread), with that time: few.
  late text[];
  late_since timestamp[];
  -- The filter, written into the query only when there is one (the thread list hashed, as a value known when planned).
  filter text := '';
  near_ids text[];
  near_d float8[];
BEGIN
  IF p_scope_general IS NOT NULL THEN
    SELECT coalesce(array_agg(t.id), '{}'), coalesce(array_agg(t.id) FILTER (WHERE t.since > p_since), '{}'),
           coalesce(array_agg(t.since) FILTER (WHERE t.since > p_since), '{}')
      INTO threads, late, late_since
      FROM mnemo_searchable_threads(p_user, p_exclude, p_since, p_scope_project, p_scope_general) t;
    filter := ' AND i."threadId" = ANY($6) AND i."createdAt" > $7';
    IF cardinality(late) > 0 THEN
      filter := filter || ' AND (i."threadId" <> ALL($8) OR i."createdAt" > ($9)[array_position($8, i."threadId")])';
    END IF;
  END IF;
  -- Restored when the function returns (it is in the function's SET clause).
  PERFORM set_config('hnsw.max_scan_tuples', greatest(1000, 5 * sqrt(greatest(c.reltuples, 0)))::integer::text, true)
     FROM pg_class c WHERE c.relname = format('Item_embedding_hnsw_distinct_%s', p_dims);
  EXECUTE format($sql$
    SELECT array_agg(n.id ORDER BY n.d), array_agg(n.d ORDER BY n.d) FROM (
      SELECT i.id, (i.embedding::vector(%1$s)) <=> $3::vector(%1$s) AS d FROM "Item" i
       WHERE i."userId" = $1 AND i."embeddingModel" = $2 AND array_length(i.embedding, 1) = %1$s
         AND i."threadId" IS DISTINCT FROM $5 AND NOT i."vectorCopy" %2$s
       ORDER BY (i.embedding::vector(%1$s)) <=> $3::vector(%1$s) LIMIT $4
    ) n
  $sql$, p_dims, filter) INTO near_ids, near_d
    USING p_user, p_model, p_vector, p_k, p_exclude, threads, p_since, late, late_since;
  IF coalesce(cardinality(near_ids), 0) < p_k THEN
    RETURN QUERY EXECUTE format($sql$
      SELECT e.id, (1 - e.d)::float8 FROM (
        SELECT i.id, (i.embedding::vector(%1$s)) <=> $3::vector(%1$s) AS d FROM "Item" i
         WHERE i."userId" = $1 AND i."embeddingModel" = $2 AND array_length(i.embedding, 1) = %1$s
           AND i."threadId" IS DISTINCT FROM $5 %2$s
      ) e ORDER BY e.d LIMIT $4
    $sql$, p_dims, filter) USING p_user, p_model, p_vector, p_k, p_exclude, threads, p_since, late, late_since;
  ELSIF NOT EXISTS (SELECT 1 FROM "Item" c WHERE c."userId" = p_user AND c."vectorCopy") THEN
    RETURN QUERY SELECT n.id, (1 - n.d)::float8 FROM unnest(near_ids, near_d) WITH ORDINALITY AS n(id, d, o) ORDER BY n.o;
  ELSE
    RETURN QUERY EXECUTE format($sql$
      WITH RECURSIVE copy_key_list (key) AS (
        -- The user's distinct copied vectors, one index probe each (a loose scan), not one row per copy.
        (SELECT "vectorKey" FROM "Item" WHERE "userId" = $1 AND "vectorCopy" ORDER BY "vectorKey" LIMIT 1)
        UNION ALL
        SELECT (SELECT "vectorKey" FROM "Item" WHERE "userId" = $1 AND "vectorCopy" AND "vectorKey" > l.key
                ORDER BY "vectorKey" LIMIT 1)
          FROM copy_key_list l WHERE l.key IS NOT NULL
      ), copy_keys AS MATERIALIZED (
        SELECT key, d FROM (
          -- A key counts only where the user has a row with it that may be read (the filter), or the first k keys
          -- could all be in other threads.
          SELECT c.key, (SELECT (i.embedding::vector(%1$s)) <=> $3::vector(%1$s) FROM "Item" i
                          WHERE i."userId" = $1 AND i."vectorCopy" AND i."vectorKey" = c.key
                            AND i."embeddingModel" = $2 AND array_length(i.embedding, 1) = %1$s
                            AND i."threadId" IS DISTINCT FROM $5 %2$s LIMIT 1) AS d
            FROM copy_key_list c WHERE c.key IS NOT NULL
        ) y WHERE d IS NOT NULL ORDER BY d LIMIT $4
      ), copies AS MATERIALIZED (
        SELECT r.id, c.d FROM copy_keys c CROSS JOIN LATERAL (
          SELECT i.id FROM "Item" i WHERE i."userId" = $1 AND i."vectorCopy" AND i."vectorKey" = c.key
             AND i."threadId" IS DISTINCT FROM $5 %2$s LIMIT $4
        ) r ORDER BY c.d LIMIT $4
      )
      SELECT n.id, (1 - n.d)::float8 FROM (
        SELECT x.id, x.d FROM unnest($10::text[], $11::float8[]) AS x(id, d)
        UNION ALL
        SELECT copies.id, copies.d FROM copies
      ) n ORDER BY n.d LIMIT $4
    $sql$, p_dims, filter)
      USING p_user, p_model, p_vector, p_k, p_exclude, threads, p_since, late, late_since, near_ids, near_d;
  END IF;
END
$$;
