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
