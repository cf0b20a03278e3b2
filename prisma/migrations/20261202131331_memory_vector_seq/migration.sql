-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "vectorSeq" bigint;

