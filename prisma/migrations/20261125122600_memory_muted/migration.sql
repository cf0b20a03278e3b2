-- "Don't mention this": a memory the user keeps but never wants sent to a model.
-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "muted" BOOLEAN NOT NULL DEFAULT false;
