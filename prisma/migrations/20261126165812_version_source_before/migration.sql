-- AlterTable
ALTER TABLE "MemoryVersion" ADD COLUMN     "sourceBefore" TEXT;

