-- AlterTable
ALTER TABLE "User" ADD COLUMN     "consolidatedAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "conflictWithId" TEXT,
ADD COLUMN     "needsRevalidation" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "steps" JSONB,
ADD COLUMN     "verifiedAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Memory_userId_conflictWithId_idx" ON "Memory"("userId", "conflictWithId");

