-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "private" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "MemorySend" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "memoryIds" TEXT[],
    "model" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "local" BOOLEAN NOT NULL,
    "client" TEXT NOT NULL,
    "apiKeyId" TEXT,

    CONSTRAINT "MemorySend_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "MemorySend_userId_at_idx" ON "MemorySend"("userId", "at");

-- AddForeignKey
ALTER TABLE "MemorySend" ADD CONSTRAINT "MemorySend_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemorySend" ADD CONSTRAINT "MemorySend_apiKeyId_fkey" FOREIGN KEY ("apiKeyId") REFERENCES "ApiKey"("id") ON DELETE SET NULL ON UPDATE CASCADE;

