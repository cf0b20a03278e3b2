-- mnemo_message_vectors_mark: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- How many of a user's messages have a vector of a model, and the newest transaction that stored one ("vectorSeq"):
-- whether the vectors an app instance keeps in memory for the exact search (lib/memory/vectors.ts) are still all of
-- them, and if not, from where to read the rest (kept for instances of the release before mnemo_message_vectors_since
-- while a new one starts beside them; nothing calls it now). A function, so it travels in the turn's one batched read.
CREATE OR REPLACE FUNCTION mnemo_message_vectors_mark(p_user text, p_model text)
RETURNS TABLE (n integer, m text)
LANGUAGE sql STABLE AS $$
  SELECT count(*)::int, max(i."vectorSeq")::text FROM "Item" i WHERE i."userId" = p_user AND i."embeddingModel" = p_model
$$;
