-- mnemo_message_vector_changes: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- What changed in a user's message vectors since an app instance last read them (lib/memory/kept-vectors.ts), in
-- the turn's one batched read (lib/db/function-calls.ts):
-- - 'mark': the horizon to read from next time (the snapshot's xmin: every transaction below it had ended, so a
--   vector stamped below it, "vectorSeq", was seen, however late its transaction committed);
-- - up to p_limit rows stamped at or after `p_horizon`: 'new' above `p_newest` (the newest the instance keeps), with
--   the vector when it has `p_dims` dimensions; 'held' at or below it (the instance reads it only when it does not
--   keep that version: a transaction that committed late); 'other' when its vector is no longer of `p_model`;
-- - up to p_limit messages deleted since (ItemVectorGone), 'gone'.
-- Index reads of what changed only: the cost does not grow with the user's history. PL/pgSQL, so its plan is kept
-- between turns: as a SQL function it was planned again in every turn's read (0.56 ms of the 7.6 ms statement on
-- PGlite, stop 60).
CREATE OR REPLACE FUNCTION mnemo_message_vector_changes(p_user text, p_model text, p_horizon text, p_newest text,
                                                        p_dims integer, p_limit integer)
RETURNS TABLE (kind text, id text, "threadId" text, seq text, embedding real[])
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
  SELECT 'mark', NULL::text, NULL::text, pg_snapshot_xmin(pg_current_snapshot())::text, NULL::real[]
  UNION ALL
  (SELECT CASE WHEN i."embeddingModel" IS DISTINCT FROM p_model THEN 'other'
               WHEN p_newest IS NULL OR i."vectorSeq" > p_newest::bigint THEN 'new' ELSE 'held' END,
          i.id, i."threadId", i."vectorSeq"::text,
          CASE WHEN i."embeddingModel" = p_model AND (p_newest IS NULL OR i."vectorSeq" > p_newest::bigint)
                AND array_length(i.embedding, 1) = p_dims THEN i.embedding END
     FROM "Item" i
    WHERE p_horizon IS NOT NULL AND i."userId" = p_user AND i."vectorSeq" >= p_horizon::bigint
    ORDER BY i."vectorSeq" LIMIT p_limit)
  UNION ALL
  (SELECT 'gone', g."itemId", NULL::text, g.seq::text, NULL::real[]
     FROM "ItemVectorGone" g
    WHERE p_horizon IS NOT NULL AND g."userId" = p_user AND g.seq >= p_horizon::bigint
    ORDER BY g.seq LIMIT p_limit);
END
$$;
