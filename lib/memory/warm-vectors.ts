// The exact search's first read of a user's message vectors takes seconds on PGlite with thousands of messages
// (1.5 s at 10,000, bench:vectors): started when the user shows up (the app's page loads, or a /v1 or /mcp request
// with their key), it is done before the first question asks, or that question waits for it instead of reading again.
import type { Db } from "@/lib/db/types";
import { resolveEmbedder } from "@/lib/llm/embeddings";
import { keptDims, messageVectors } from "./kept-vectors";
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
  // Kept already: nothing to read (the next turn reads what changed).
  if (!e || keptDims(db, userId, e.model) !== null) return;
  // The size of the model's vectors (any of the user's: a model makes vectors of one size).
  const [row] = await db.$queryRaw<Array<{ dims: number | null }>>`
    SELECT array_length(embedding, 1) AS dims FROM "Item"
     WHERE "userId" = ${userId} AND "embeddingModel" = ${e.model} AND embedding IS NOT NULL LIMIT 1
  `;
  if (!row?.dims) return;
  await messageVectors(db, userId, e.model, row.dims);
}
