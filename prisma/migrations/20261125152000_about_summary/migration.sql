-- "What Mnemo knows about you": the summary, when it was written, and whether the user wrote it.
-- AlterTable
ALTER TABLE "User" ADD COLUMN     "aboutSummary" TEXT,
ADD COLUMN     "aboutSummaryAt" TIMESTAMP(3),
ADD COLUMN     "aboutSummaryEdited" BOOLEAN NOT NULL DEFAULT false;

