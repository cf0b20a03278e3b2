-- AlterTable
ALTER TABLE "User" ADD COLUMN     "dailyMessageLimit" INTEGER,
ADD COLUMN     "dailyTokenLimit" INTEGER;

-- CreateIndex
CREATE INDEX "Item_userId_createdAt_idx" ON "Item"("userId", "createdAt");

