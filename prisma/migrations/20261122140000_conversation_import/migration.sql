-- AlterTable
ALTER TABLE "Thread" ADD COLUMN     "importLearn" TEXT,
ADD COLUMN     "importLearnedThrough" INTEGER,
ADD COLUMN     "importRef" TEXT,
ADD COLUMN     "importSource" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "Thread_userId_importRef_key" ON "Thread"("userId", "importRef");

