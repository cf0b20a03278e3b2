-- mnemo_nearest_passages: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- pgvector's search of the messages recall may read (mnemo_nearest_messages, filtered in the search) and the
-- neighbours of its hits (mnemo_hits_with_neighbours), in one call: it goes out in the turn's batched read, so the
-- neighbours cost no round trip of their own before the model. Only called where the extension is installed.
CREATE OR REPLACE FUNCTION mnemo_nearest_passages(p_user text, p_model text, p_vector text, p_dims integer,
                                                  p_k integer, p_exclude text, p_n integer, p_since timestamp,
                                                  p_scope_project text, p_scope_general boolean)
RETURNS SETOF mnemo_passage_row
LANGUAGE plpgsql STABLE AS $$
DECLARE
  ids text[];
  scores float8[];
BEGIN
  SELECT array_agg(n.id ORDER BY n.score DESC, n.id), array_agg(n.score ORDER BY n.score DESC, n.id) INTO ids, scores
    FROM mnemo_nearest_messages(p_user, p_model, p_vector, p_dims, p_k, p_exclude, p_since, p_scope_project,
                                p_scope_general) n;
  IF ids IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT * FROM mnemo_hits_with_neighbours(p_user, p_exclude, ids, scores, p_n, p_since, p_scope_project,
                                                        p_scope_general, p_k);
END
$$;
