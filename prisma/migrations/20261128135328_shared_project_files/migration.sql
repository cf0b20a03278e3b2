-- AlterTable
ALTER TABLE "Attachment" ADD COLUMN     "addedById" TEXT;

