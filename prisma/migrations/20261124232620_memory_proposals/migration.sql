-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "proposalForId" TEXT,
ADD COLUMN     "proposalOp" TEXT;

