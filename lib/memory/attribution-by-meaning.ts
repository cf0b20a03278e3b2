// Attribution by meaning (with an embedding model): once an answer has its
// vector (the embed job, lib/memory/embed.ts), a memory it was given but did
// not visibly draw on (no specific words carried, no citation; see
// lib/memory/attribution.ts) counts as used when the two vectors are close.
// It runs after the answer, off the hot path, with no extra model call: the
// answer's vector is made anyway for recall by meaning. "Memories used" under
// the answer shows it from the next load of the thread.
import type { Db } from "@/lib/db/types";
import { getConfig } from "@/lib/config";
import { cosine } from "./vector-scores";

type Candidate = { itemId: string; memoryId: string; answer: number[]; memory: number[] };

/** Marks as used the given-but-unused memories of these answers that their vectors show they drew on. */
export async function attributeByMeaning(db: Db, model: string, itemIds: string[]): Promise<number> {
  const threshold = getConfig().memory.attributionSimilarity;
  if (!itemIds.length || threshold > 1) return 0;
  const rows = await db.$queryRaw<Candidate[]>`
    SELECT mu."itemId", mu."memoryId", i.embedding AS answer, m.embedding AS memory
    FROM "MemoryUse" mu
    JOIN "Item" i ON i.id = mu."itemId"
    JOIN "Memory" m ON m.id = mu."memoryId"
    WHERE mu."itemId" = ANY(${itemIds}::text[]) AND NOT mu.used AND i.role = 'assistant'
      AND i."embeddingModel" = ${model} AND m."embeddingModel" = ${model}
      AND i.embedding IS NOT NULL AND m.embedding IS NOT NULL
  `;
  const hits = rows.filter((r) => cosine(r.answer, r.memory) >= threshold);
  if (!hits.length) return 0;
  // Flipped once (NOT used), and each memory's use count grows by the answers newly found to use it.
  return db.$executeRaw`
    WITH up AS (
      UPDATE "MemoryUse" mu SET used = true
      FROM unnest(${hits.map((h) => h.itemId)}::text[], ${hits.map((h) => h.memoryId)}::text[]) AS h("itemId", "memoryId")
      WHERE mu."itemId" = h."itemId" AND mu."memoryId" = h."memoryId" AND NOT mu.used
      RETURNING mu."memoryId"
    )
    UPDATE "Memory" m SET "useCount" = m."useCount" + u.n, "lastUsedAt" = ${new Date()}
    FROM (SELECT "memoryId", count(*)::int AS n FROM up GROUP BY "memoryId") u
    WHERE m.id = u."memoryId"
  `;
}
