-- mnemo_memory_vector_versions: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The memories recall may search by meaning (active, not muted, not expired, with a vector of this model) and each
-- vector's version (the transaction that wrote it, "vectorSeq"; the row's xmin, which any update changes, for a
-- vector written before it was kept), so an app instance reads again only the vectors that changed
-- (lib/memory/kept-memory-vectors.ts). The vector's size is checked there, on the kept vector: testing it here read
-- every row's vector out of storage on every recall (1.0 against 0.24 ms for a user's 184 memories on PGlite).
-- A function, so it travels in the turn's one batched read.
-- The first row (id NULL) is a digest of the list; when it equals `p_known` (the digest of the list the instance
-- kept) the list itself is not sent. The digest is read from two index entries, whatever the number of memories: the
-- transaction that last changed what qualifies ("MemoryVectorState", kept by the "Memory_vector_state" triggers) and
-- the user's next memory to expire, which leaves the list when that time passes, with no write. Hashing every row
-- instead cost about 1 ms a turn for 1,000 memories, and grew with them.
CREATE OR REPLACE FUNCTION mnemo_memory_vector_versions(p_user text, p_model text, p_known text)
RETURNS TABLE (id text, version text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  digest text;
BEGIN
  SELECT coalesce((SELECT s."lastChange" FROM "MemoryVectorState" s WHERE s."userId" = p_user), 0) || ':' ||
         coalesce((SELECT min(m."expiresAt") FROM "Memory" m WHERE m."userId" = p_user AND m."expiresAt" > now())::text, '')
    INTO digest;
  RETURN QUERY SELECT NULL::text, digest;
  IF digest IS DISTINCT FROM p_known THEN
    RETURN QUERY
    SELECT m.id, coalesce(m."vectorSeq"::text, 'x' || m.xmin::text) FROM "Memory" m
     WHERE m."userId" = p_user AND m."embeddingModel" = p_model AND m.status = 'active' AND NOT m.muted
       AND m.embedding IS NOT NULL AND (m."expiresAt" IS NULL OR m."expiresAt" > now());
  END IF;
END
$$;
