-- mnemo_embedding_stale: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A vector describes the text it was made from: when the text changes, the
-- vector is dropped and the row waits for the embedder again.
CREATE OR REPLACE FUNCTION mnemo_embedding_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.embedding := NULL;
  NEW."embeddingModel" := NULL;
  RETURN NEW;
END
$$;
