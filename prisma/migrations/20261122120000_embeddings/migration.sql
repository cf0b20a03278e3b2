-- Semantic search. On PostgreSQL with the pgvector extension available, enable
-- it (lib/memory/vectors.ts then ranks with it and builds an HNSW index per
-- vector size); where it cannot be created (PGlite, a server without pgvector)
-- vectors are still stored and searched by an exact scan in the app.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS vector;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'pgvector is not available here; vector search uses an exact scan';
END
$$;

-- AlterTable
ALTER TABLE "Item" ADD COLUMN     "embedding" real[],
ADD COLUMN     "embeddingModel" TEXT;

-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "embedding" real[],
ADD COLUMN     "embeddingModel" TEXT;

-- CreateIndex
CREATE INDEX "Item_userId_embeddingModel_idx" ON "Item"("userId", "embeddingModel");

-- CreateIndex
CREATE INDEX "Memory_userId_embeddingModel_idx" ON "Memory"("userId", "embeddingModel");


-- A vector describes the text it was made from: when the text changes, the
-- vector is dropped and the row waits for the embedder again.
CREATE FUNCTION mnemo_embedding_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.embedding := NULL;
  NEW."embeddingModel" := NULL;
  RETURN NEW;
END
$$;
CREATE TRIGGER "Memory_embedding_stale" BEFORE UPDATE OF text ON "Memory"
  FOR EACH ROW WHEN (NEW.text IS DISTINCT FROM OLD.text) EXECUTE FUNCTION mnemo_embedding_stale();
CREATE TRIGGER "Item_embedding_stale" BEFORE UPDATE OF content ON "Item"
  FOR EACH ROW WHEN (NEW.content IS DISTINCT FROM OLD.content) EXECUTE FUNCTION mnemo_embedding_stale();
