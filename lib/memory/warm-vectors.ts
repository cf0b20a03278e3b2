// The exact search's first read of a user's message vectors takes seconds on PGlite with thousands of messages
// (2.2 s at 10,000, bench:vectors): started when the app's page loads, it is done before the first question asks.
import type { Db } from "@/lib/db/types";
import { resolveEmbedder } from "@/lib/llm/embeddings";
import { keepsVectors, messageVectors } from "./kept-vectors";
import { vectorIndex } from "./vectors";

/** Not awaited by the page: reads the user's message vectors into this instance unless it keeps them already. */
export function warmMessageVectors(db: Db, userId: string): void {
  void warm(db, userId).catch((e) =>
    console.warn(`[mnemo] reading a user's message vectors ahead failed: ${e instanceof Error ? e.message : e}`),
  );
}

async function warm(db: Db, userId: string) {
  if ((await vectorIndex(db)).kind !== "exact") return;
  const e = await resolveEmbedder(db).catch(() => null);
  if (!e) return;
  // The size of the model's vectors (any of the user's: a model makes vectors of one size).
  const [row] = await db.$queryRaw<Array<{ dims: number | null }>>`
    SELECT array_length(embedding, 1) AS dims FROM "Item"
     WHERE "userId" = ${userId} AND "embeddingModel" = ${e.model} AND embedding IS NOT NULL LIMIT 1
  `;
  if (!row?.dims || keepsVectors(db, userId, e.model, row.dims)) return;
  await messageVectors(db, userId, e.model, row.dims);
}
