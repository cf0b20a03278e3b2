-- AlterTable
ALTER TABLE "User" ADD COLUMN     "aboutOutdatedAt" TIMESTAMP(3);

