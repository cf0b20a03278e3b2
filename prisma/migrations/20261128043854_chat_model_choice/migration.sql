-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "model" TEXT;

-- AlterTable
ALTER TABLE "Thread" ADD COLUMN     "model" TEXT;

