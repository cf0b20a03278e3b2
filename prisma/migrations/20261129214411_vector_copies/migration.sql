-- AlterTable
ALTER TABLE "Item" ADD COLUMN     "vectorCopy" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "vectorKey" TEXT;

-- Rows already embedded: each vector's first row (by id) stays in the approximate index, the others are copies
-- (lib/memory/vectors.ts). The key is computed as lib/memory/embed.ts stores it.
UPDATE "Item" SET "vectorKey" = md5(embedding::text) WHERE embedding IS NOT NULL;
UPDATE "Item" i SET "vectorCopy" = true
  FROM (SELECT id, row_number() OVER (PARTITION BY "embeddingModel", "vectorKey" ORDER BY id) AS n
          FROM "Item" WHERE "vectorKey" IS NOT NULL) r
 WHERE r.id = i.id AND r.n > 1;

-- CreateIndex
CREATE INDEX "Item_vectorKey_vectorCopy_idx" ON "Item"("vectorKey", "vectorCopy");

-- CreateIndex
CREATE INDEX "Item_userId_vectorCopy_vectorKey_idx" ON "Item"("userId", "vectorCopy", "vectorKey");
