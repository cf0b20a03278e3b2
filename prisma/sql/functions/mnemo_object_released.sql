-- mnemo_object_released: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- An attachment row whose bytes are in object storage was deleted (by any path: its thread, its account, the drafts'
-- sweep, a cascade): its object is noted for the sweeper, which removes it once no other row (an edit's copy) names it.
CREATE OR REPLACE FUNCTION mnemo_object_released() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD."objectKey" IS NOT NULL THEN
    INSERT INTO "ReleasedObject" (key) VALUES (OLD."objectKey") ON CONFLICT (key) DO NOTHING;
  END IF;
  RETURN OLD;
END;
$$;
