-- Memories that know when they were true: a "past" status, validFrom/validUntil, and the memory that replaced one.
-- AlterEnum
ALTER TYPE "MemoryStatus" ADD VALUE 'past';

-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "supersededById" TEXT,
ADD COLUMN     "validFrom" TIMESTAMP(3),
ADD COLUMN     "validUntil" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Memory_supersededById_idx" ON "Memory"("supersededById");

