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
