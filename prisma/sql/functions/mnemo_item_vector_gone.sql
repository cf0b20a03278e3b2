-- mnemo_item_vector_gone: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The deleted messages that had a vector, by id (trigger "Item_vector_gone", once per statement, whatever deleted
-- them: an undo, the thread, the account, retention), stamped with the deleting transaction: an instance keeping the
-- user's vectors drops them without reading every id (lib/memory/kept-vectors.ts). None for an account being
-- deleted: nothing of it is left behind.
CREATE OR REPLACE FUNCTION mnemo_item_vector_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "ItemVectorGone" ("itemId", "userId", seq, at)
  SELECT g.id, g."userId", pg_current_xact_id()::text::bigint, timezone('UTC', now()) FROM gone g
   WHERE g."embeddingModel" IS NOT NULL AND EXISTS (SELECT 1 FROM "User" u WHERE u.id = g."userId")
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
