-- mnemo_audit_append_only: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- Audit rows are append-only: no deletes, and the only update allowed is the
-- foreign keys' ON DELETE SET NULL detaching a deleted account's id.
CREATE OR REPLACE FUNCTION mnemo_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.action = OLD.action
     AND NEW."threadId" IS NOT DISTINCT FROM OLD."threadId"
     AND NEW.reason IS NOT DISTINCT FROM OLD.reason
     AND NEW.detail IS NOT DISTINCT FROM OLD.detail
     AND (NEW."actorId" IS NOT DISTINCT FROM OLD."actorId" OR NEW."actorId" IS NULL)
     AND (NEW."subjectUserId" IS NOT DISTINCT FROM OLD."subjectUserId" OR NEW."subjectUserId" IS NULL) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'AuditLog is append-only';
END;
$$;
