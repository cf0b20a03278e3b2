-- A memory given to the model with an answer is recorded whether or not the answer drew on it; `used` says which
-- (read from the answer's text after it is written, lib/memory/attribution.ts). Rows from before kept their meaning
-- of "given", which was all that was known: they stay counted as used.
ALTER TABLE "MemoryUse" ADD COLUMN "used" BOOLEAN NOT NULL DEFAULT true;
