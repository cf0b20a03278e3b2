-- AlterTable
ALTER TABLE "Attachment" ADD COLUMN     "passageModel" TEXT,
ADD COLUMN     "passageVectors" real[];

