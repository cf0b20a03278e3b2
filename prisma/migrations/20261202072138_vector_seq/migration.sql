-- AlterTable
ALTER TABLE "Item" ADD COLUMN     "vectorSeq" bigint;

-- CreateIndex
CREATE INDEX "Item_userId_vectorSeq_idx" ON "Item"("userId", "vectorSeq");

