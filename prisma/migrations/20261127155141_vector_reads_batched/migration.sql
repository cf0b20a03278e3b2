-- from prisma/sql/functions/mnemo_memory_vector_versions.sql
-- mnemo_memory_vector_versions: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The memories recall may search by meaning (active, not muted, not expired, with a vector of this model and size)
-- and each row's version (xmin: any update makes a new one), so an app instance reads again only the vectors of rows
-- that changed (lib/memory/vectors.ts). A function, so it travels in the turn's one batched read.
CREATE OR REPLACE FUNCTION mnemo_memory_vector_versions(p_user text, p_model text, p_dims integer)
RETURNS TABLE (id text, version text)
LANGUAGE sql STABLE AS $$
  SELECT m.id, m.xmin::text FROM "Memory" m
   WHERE m."userId" = p_user AND m."embeddingModel" = p_model AND m.status = 'active' AND NOT m.muted
     AND m.embedding IS NOT NULL AND array_length(m.embedding, 1) = p_dims
     AND (m."expiresAt" IS NULL OR m."expiresAt" > now())
$$;

-- from prisma/sql/functions/mnemo_message_vectors_mark.sql
-- mnemo_message_vectors_mark: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- How many of a user's messages have a vector of a model, and the newest such message: whether the vectors an app
-- instance keeps in memory for the exact search (lib/memory/vectors.ts) are still all of them. A function, so it
-- travels in the turn's one batched read (lib/db/function-calls.ts) instead of a round trip of its own.
CREATE OR REPLACE FUNCTION mnemo_message_vectors_mark(p_user text, p_model text)
RETURNS TABLE (n integer, m text)
LANGUAGE sql STABLE AS $$
  SELECT count(*)::int, max(i.id) FROM "Item" i WHERE i."userId" = p_user AND i."embeddingModel" = p_model
$$;
