// Semantic de-duplication: when a memory gets its vector, an active memory of
// the same user that says the same thing in other words (cosine similarity at
// or above MNEMO_MEMORY_MERGE_SIMILARITY) is merged with it. The stronger one
// stays (explicit > manual > inferred, then newer; see `outranks`); the other
// is archived with a version saying what it was merged into, so the merge is
// visible in its history and can be undone by restoring it. A pin moves to the
// memory that stays. Memories with equal normalised text never get this far:
// addMemory merges those at once.
import type { UserContext } from "@/lib/user-context";
import { getConfig } from "@/lib/config";
import { outranks } from "./long-term";
import { modelRetire } from "./writes";
import { nearestMemories } from "./vectors";

/**
 * Merges each of these (just embedded) memories with its nearest near-duplicate, if any. Returns how many were
 * archived.
 */
export async function mergeNearDuplicates(u: UserContext, model: string, memoryIds: string[]): Promise<number> {
  const { db } = u;
  const threshold = getConfig().memory.mergeSimilarity;
  if (!memoryIds.length || threshold > 1) return 0;
  let merged = 0;
  const rows = await db.$queryRaw<Array<{ id: string; userId: string; embedding: number[] | null }>>`
    SELECT id, "userId", embedding FROM "Memory"
     WHERE id = ANY(${memoryIds}::text[]) AND "userId" = ${u.userId} AND status = 'active' AND "embeddingModel" = ${model}
  `;
  for (const row of rows) {
    if (!row.embedding?.length) continue;
    const near = (await nearestMemories(db, row.userId, model, row.embedding, 2)).find(
      (h) => h.id !== row.id && h.score >= threshold,
    );
    if (!near) continue;
    if (await mergePair(u, row.id, near.id, near.score)) merged++;
  }
  return merged;
}

async function mergePair(u: UserContext, a: string, b: string, score: number): Promise<boolean> {
  const { db, userId } = u;
  const c = u.cipher;
  const pair = await db.memory.findMany({ where: { id: { in: [a, b] }, userId, status: "active" } });
  if (pair.length !== 2) return false; // one was changed or merged meanwhile
  // Close vectors can still be different facts when only a number differs
  // ("visited in 2019" / "visited in 2021"): those stay apart.
  if (numbersIn(c.open(pair[0].text)) !== numbersIn(c.open(pair[1].text))) return false;
  const [keep, drop] = outranks(pair[0], pair[1]) ? [pair[0], pair[1]] : [pair[1], pair[0]];
  // Through the gate (lib/memory/writes.ts): paused, review, a pinned or user-written memory to retire.
  const r = await modelRetire(u, {
    keepId: keep.id,
    dropId: drop.id,
    reason: `Merged into a memory that says the same (similarity ${score.toFixed(2)})`,
  });
  return r === "retired";
}

export const numbersIn = (text: string) => [...new Set(text.match(/\d+(?:[.,]\d+)*/g) ?? [])].sort().join(" ");
