-- CreateEnum
CREATE TYPE "MemoryKind" AS ENUM ('fact', 'preference', 'procedure', 'other');

-- CreateEnum
CREATE TYPE "MemoryStatus" AS ENUM ('active', 'pending', 'archived');

-- CreateEnum
CREATE TYPE "MemorySource" AS ENUM ('explicit', 'inferred', 'manual');

-- CreateEnum
CREATE TYPE "MemoryActor" AS ENUM ('user', 'model', 'admin');

-- AlterTable
ALTER TABLE "User" ADD COLUMN     "memoryPaused" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "memoryResetAt" TIMESTAMP(3),
ADD COLUMN     "memoryReview" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
-- Generated full-text columns (Prisma sees them as Unsupported("tsvector")).
ALTER TABLE "Item" ADD COLUMN     "search" tsvector GENERATED ALWAYS AS (to_tsvector('english', "content")) STORED;

-- CreateTable
CREATE TABLE "Memory" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "kind" "MemoryKind" NOT NULL DEFAULT 'fact',
    "text" TEXT NOT NULL,
    "status" "MemoryStatus" NOT NULL DEFAULT 'active',
    "source" "MemorySource" NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "sourceThreadId" TEXT,
    "sourceItemId" TEXT,
    "sourceRef" TEXT,
    "tokens" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "lastUsedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),
    "search" tsvector GENERATED ALWAYS AS (to_tsvector('english', "text")) STORED,

    CONSTRAINT "Memory_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MemoryVersion" (
    "id" TEXT NOT NULL,
    "memoryId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "oldText" TEXT,
    "newText" TEXT,
    "actor" "MemoryActor" NOT NULL,
    "reason" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MemoryVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MemoryUse" (
    "itemId" TEXT NOT NULL,
    "memoryId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MemoryUse_pkey" PRIMARY KEY ("itemId","memoryId")
);

-- CreateIndex
CREATE INDEX "Memory_userId_status_pinned_idx" ON "Memory"("userId", "status", "pinned");

-- CreateIndex
CREATE INDEX "Memory_search_idx" ON "Memory" USING GIN ("search");

-- CreateIndex
CREATE INDEX "MemoryVersion_memoryId_createdAt_idx" ON "MemoryVersion"("memoryId", "createdAt");

-- CreateIndex
CREATE INDEX "MemoryUse_memoryId_idx" ON "MemoryUse"("memoryId");

-- CreateIndex
CREATE INDEX "MemoryUse_userId_idx" ON "MemoryUse"("userId");

-- CreateIndex
CREATE INDEX "Item_search_idx" ON "Item" USING GIN ("search");

-- AddForeignKey
ALTER TABLE "Memory" ADD CONSTRAINT "Memory_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryVersion" ADD CONSTRAINT "MemoryVersion_memoryId_fkey" FOREIGN KEY ("memoryId") REFERENCES "Memory"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryUse" ADD CONSTRAINT "MemoryUse_memoryId_fkey" FOREIGN KEY ("memoryId") REFERENCES "Memory"("id") ON DELETE CASCADE ON UPDATE CASCADE;

