-- AlterTable
ALTER TABLE "MemoryVersion" ADD COLUMN     "sourceItemId" TEXT;

-- CreateIndex
CREATE INDEX "MemoryVersion_sourceItemId_idx" ON "MemoryVersion"("sourceItemId");

