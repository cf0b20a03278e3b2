-- mnemo_memory_vector_seq: its current source. Change it here, then `npm run db:functions -- <migration_name>`
-- writes the migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A memory's vector stamped with the transaction that wrote it (trigger "Memory_vector_seq", on a write naming the
-- vector or its model, whichever path writes it): an instance keeping memory vectors reads one again when this
-- changes, not on every update of the row (each answer that uses a memory counts the use).
CREATE OR REPLACE FUNCTION mnemo_memory_vector_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."vectorSeq" := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END
$$;
