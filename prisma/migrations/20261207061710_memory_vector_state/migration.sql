-- CreateTable
CREATE TABLE "MemoryVectorState" (
    "userId" TEXT NOT NULL,
    "lastChange" BIGINT NOT NULL,

    CONSTRAINT "MemoryVectorState_pkey" PRIMARY KEY ("userId")
);

-- CreateIndex
CREATE INDEX "Memory_userId_expiresAt_idx" ON "Memory"("userId", "expiresAt");

-- AddForeignKey
ALTER TABLE "MemoryVectorState" ADD CONSTRAINT "MemoryVectorState_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

