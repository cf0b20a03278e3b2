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
