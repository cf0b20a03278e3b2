-- from prisma/sql/functions/mnemo_memory_vector_state.sql
-- mnemo_memory_vector_state: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- Records, per user, the transaction that last changed which memories recall may search by meaning
-- ("MemoryVectorState"; read by mnemo_memory_vector_versions). Run by the "Memory_vector_state" constraint triggers,
-- deferred to commit: a transaction writing several memories would otherwise hold the user's row from its first
-- write, and two such transactions writing in different orders would deadlock. Writing the transaction's own id (not
-- a count) makes a second change in the same transaction write nothing. Only for a user that still exists: when an
-- account is deleted its memories go with it, and so has this row.
CREATE OR REPLACE FUNCTION mnemo_memory_vector_state() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  xact bigint := pg_current_xact_id()::text::bigint;
  uid text;
BEGIN
  FOR uid IN SELECT DISTINCT u FROM unnest(ARRAY[CASE WHEN TG_OP <> 'INSERT' THEN OLD."userId" END,
                                                 CASE WHEN TG_OP <> 'DELETE' THEN NEW."userId" END]) u
              WHERE u IS NOT NULL LOOP
    INSERT INTO "MemoryVectorState" AS s ("userId", "lastChange")
    SELECT uid, xact WHERE EXISTS (SELECT 1 FROM "User" u WHERE u.id = uid)
    ON CONFLICT ("userId") DO UPDATE SET "lastChange" = excluded."lastChange"
      WHERE s."lastChange" IS DISTINCT FROM excluded."lastChange";
  END LOOP;
  RETURN NULL;
END
$$;

-- from prisma/sql/functions/mnemo_memory_vector_versions.sql
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

-- Deferred to commit (mnemo_memory_vector_state says why). A write that only counts a use, or edits the text before
-- its new vector, leaves what recall searches as it was.
CREATE CONSTRAINT TRIGGER "Memory_vector_state_rows" AFTER INSERT OR DELETE ON "Memory"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION mnemo_memory_vector_state();
CREATE CONSTRAINT TRIGGER "Memory_vector_state_changes" AFTER UPDATE ON "Memory"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD."userId" IS DISTINCT FROM NEW."userId" OR OLD."embeddingModel" IS DISTINCT FROM NEW."embeddingModel"
        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.muted IS DISTINCT FROM NEW.muted
        OR OLD."expiresAt" IS DISTINCT FROM NEW."expiresAt" OR OLD."vectorSeq" IS DISTINCT FROM NEW."vectorSeq"
        OR (OLD.embedding IS NULL) <> (NEW.embedding IS NULL))
  EXECUTE FUNCTION mnemo_memory_vector_state();
