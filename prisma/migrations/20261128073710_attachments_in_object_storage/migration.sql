-- Files' bytes in S3-compatible object storage when configured (lib/attachments/file-store.ts): the row names
-- its object, and a deleted row's object is noted for the sweeper by a trigger, whatever deleted the row.
-- AlterTable
ALTER TABLE "Attachment" ADD COLUMN     "objectKey" TEXT;

-- CreateTable
CREATE TABLE "ReleasedObject" (
    "key" TEXT NOT NULL,
    "releasedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ReleasedObject_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "Attachment_objectKey_idx" ON "Attachment"("objectKey");

-- mnemo_object_released (source: prisma/sql/functions/mnemo_object_released.sql)
CREATE OR REPLACE FUNCTION mnemo_object_released() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD."objectKey" IS NOT NULL THEN
    INSERT INTO "ReleasedObject" (key) VALUES (OLD."objectKey") ON CONFLICT (key) DO NOTHING;
  END IF;
  RETURN OLD;
END;
$$;

CREATE TRIGGER "Attachment_object_released" AFTER DELETE ON "Attachment"
  FOR EACH ROW EXECUTE FUNCTION mnemo_object_released();
