-- AlterTable
ALTER TABLE "Item" ADD COLUMN     "searchTokens" TEXT;

-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "searchTokens" TEXT;

-- CreateTable
CREATE TABLE "UserKey" (
    "userId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "masterKeyId" TEXT NOT NULL,
    "wrapped" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UserKey_pkey" PRIMARY KEY ("userId","version")
);

-- CreateTable
CREATE TABLE "AuditLog" (
    "id" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actorId" TEXT,
    "subjectUserId" TEXT,
    "action" TEXT NOT NULL,
    "threadId" TEXT,
    "reason" TEXT,
    "detail" JSONB,

    CONSTRAINT "AuditLog_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AuditLog_subjectUserId_at_idx" ON "AuditLog"("subjectUserId", "at" DESC);

-- CreateIndex
CREATE INDEX "AuditLog_at_idx" ON "AuditLog"("at" DESC);

-- CreateIndex
CREATE INDEX "AuditLog_actorId_at_idx" ON "AuditLog"("actorId", "at" DESC);

-- AddForeignKey
ALTER TABLE "UserKey" ADD CONSTRAINT "UserKey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AuditLog" ADD CONSTRAINT "AuditLog_actorId_fkey" FOREIGN KEY ("actorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AuditLog" ADD CONSTRAINT "AuditLog_subjectUserId_fkey" FOREIGN KEY ("subjectUserId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;


-- Hand-written: with encryption at rest the content is ciphertext, so the
-- generated search columns index the keyed word hashes in "searchTokens" when
-- they are present, and the plain text otherwise.
DROP INDEX "Item_search_idx";
ALTER TABLE "Item" DROP COLUMN "search";
ALTER TABLE "Item" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
  CASE WHEN "searchTokens" IS NULL THEN to_tsvector('english', "content") ELSE to_tsvector('simple', "searchTokens") END
) STORED;
CREATE INDEX "Item_search_idx" ON "Item" USING GIN ("search");

DROP INDEX "Memory_search_idx";
ALTER TABLE "Memory" DROP COLUMN "search";
ALTER TABLE "Memory" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
  CASE WHEN "searchTokens" IS NULL THEN to_tsvector('english', "text") ELSE to_tsvector('simple', "searchTokens") END
) STORED;
CREATE INDEX "Memory_search_idx" ON "Memory" USING GIN ("search");

-- Audit rows are append-only: no deletes, and the only update allowed is the
-- foreign keys' ON DELETE SET NULL detaching a deleted account's id.
CREATE FUNCTION mnemo_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER "AuditLog_append_only" BEFORE UPDATE OR DELETE ON "AuditLog"
  FOR EACH ROW EXECUTE FUNCTION mnemo_audit_append_only();
