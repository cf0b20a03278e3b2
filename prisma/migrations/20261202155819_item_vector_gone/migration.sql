-- CreateTable
CREATE TABLE "ItemVectorGone" (
    "itemId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ItemVectorGone_pkey" PRIMARY KEY ("itemId","seq")
);

-- CreateIndex
CREATE INDEX "ItemVectorGone_userId_seq_idx" ON "ItemVectorGone"("userId", "seq");


-- from prisma/sql/functions/mnemo_item_vector_gone.sql
-- mnemo_item_vector_gone: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A deleted message that had a vector, by id (trigger "Item_vector_gone", whatever deleted it: an undo, the thread,
-- the account, retention), stamped with the deleting transaction: an instance keeping the user's vectors drops it
-- without reading every id (lib/memory/kept-vectors.ts). None for an account being deleted: nothing of it is left
-- behind. Row by row: a statement's transition table would hold every deleted row whole (an account's history).
CREATE OR REPLACE FUNCTION mnemo_item_vector_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM "User" u WHERE u.id = OLD."userId") THEN
    INSERT INTO "ItemVectorGone" ("itemId", "userId", seq, at)
    VALUES (OLD.id, OLD."userId", pg_current_xact_id()::text::bigint, timezone('UTC', now()))
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END
$$;

-- from prisma/sql/functions/mnemo_item_vector_seq.sql
-- mnemo_item_vector_seq: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A message's vector stamped with the transaction that wrote it (trigger "Item_vector_seq", on a write naming the
-- vector, its model or the thread, whichever path makes it), and so is a vector taken away (its model set to another
-- or none): an instance keeping the user's vectors (lib/memory/kept-vectors.ts) reads the rows stamped since its last
-- read, so it sees every change without counting the user's rows.
CREATE OR REPLACE FUNCTION mnemo_item_vector_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."embeddingModel" IS NOT NULL OR (TG_OP = 'UPDATE' AND OLD."embeddingModel" IS NOT NULL) THEN
    NEW."vectorSeq" := pg_current_xact_id()::text::bigint;
  END IF;
  RETURN NEW;
END
$$;

-- from prisma/sql/functions/mnemo_message_vector_changes.sql
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
-- Index reads of what changed only: the cost does not grow with the user's history.
CREATE OR REPLACE FUNCTION mnemo_message_vector_changes(p_user text, p_model text, p_horizon text, p_newest text,
                                                        p_dims integer, p_limit integer)
RETURNS TABLE (kind text, id text, "threadId" text, seq text, embedding real[])
LANGUAGE sql STABLE AS $$
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
    ORDER BY g.seq LIMIT p_limit)
$$;

-- On a write naming a message's vector, its model or its thread, whatever path makes it (the embedder, an import, a
-- copy, a test).
CREATE TRIGGER "Item_vector_seq" BEFORE INSERT OR UPDATE OF embedding, "embeddingModel", "threadId" ON "Item"
  FOR EACH ROW EXECUTE FUNCTION mnemo_item_vector_seq();

-- Cascades included; a message without a vector calls nothing.
CREATE TRIGGER "Item_vector_gone" AFTER DELETE ON "Item"
  FOR EACH ROW WHEN (OLD."embeddingModel" IS NOT NULL) EXECUTE FUNCTION mnemo_item_vector_gone();
