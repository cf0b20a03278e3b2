-- mnemo_message_vectors_since: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The mark of a user's message vectors of a model (a row with no id: how many messages have one, and the newest
-- transaction that stored one, "vectorSeq"), and the rows stored after `p_since` (the newest an app instance keeps
-- in memory for the exact search, lib/memory/kept-vectors.ts): up to 65, each with its vector when it has `p_dims`
-- dimensions. In the turn's one batched read (lib/db/function-calls.ts), so the usual turn, whose only new vectors are
-- the last message's and answer's, reads none by itself; with 65 the instance reads them all by itself instead.
CREATE OR REPLACE FUNCTION mnemo_message_vectors_since(p_user text, p_model text, p_since text, p_dims integer)
RETURNS TABLE (n integer, m text, id text, "threadId" text, seq text, embedding real[])
LANGUAGE sql STABLE AS $$
  SELECT count(*)::int, max(i."vectorSeq")::text, NULL::text, NULL::text, NULL::text, NULL::real[]
    FROM "Item" i WHERE i."userId" = p_user AND i."embeddingModel" = p_model
  UNION ALL
  (SELECT NULL::int, NULL::text, i.id, i."threadId", i."vectorSeq"::text,
          CASE WHEN array_length(i.embedding, 1) = p_dims THEN i.embedding END
     FROM "Item" i
    WHERE p_since IS NOT NULL AND i."userId" = p_user AND i."embeddingModel" = p_model
      AND i."vectorSeq" > p_since::bigint
    ORDER BY i."vectorSeq" LIMIT 65)
$$;
