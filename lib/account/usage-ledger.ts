// The usage ledger: per user and UTC day, how many answers were asked of the
// chat model, how many model and embedding calls were made and how many tokens
// they used, background work included (titles, summaries, learning, lessons,
// consolidation, embeddings). It is counted as calls happen, so deleting
// threads gives nothing back, and the daily limits (lib/account/usage-limits.ts)
// read it. Background calls check it before they run (`withinLimits`).
import type { Db } from "@/lib/db/client";

export type UsageDelta = { turns?: number; modelCalls?: number; embeddingCalls?: number; tokens?: number };

/** A UTC day as the ledger keys it. */
export const ledgerDay = (now = new Date()) => now.toISOString().slice(0, 10);

/** Adds to today's row (one statement; concurrent calls add up). */
export async function recordUsage(db: Db, userId: string, delta: UsageDelta, now = new Date()): Promise<void> {
  const d = {
    turns: delta.turns ?? 0,
    modelCalls: delta.modelCalls ?? 0,
    embeddingCalls: delta.embeddingCalls ?? 0,
    tokens: Math.max(0, Math.round(delta.tokens ?? 0)),
  };
  if (!d.turns && !d.modelCalls && !d.embeddingCalls && !d.tokens) return;
  await db.$executeRaw`
    INSERT INTO "UsageDay" ("userId", day, turns, "modelCalls", "embeddingCalls", tokens, "updatedAt")
     SELECT ${userId}, ${ledgerDay(now)}::date, ${d.turns}, ${d.modelCalls}, ${d.embeddingCalls}, ${d.tokens}, now() WHERE EXISTS (SELECT 1 FROM "User" WHERE id = ${userId})
     ON CONFLICT ("userId", day) DO UPDATE SET
       turns = "UsageDay".turns + EXCLUDED.turns,
       "modelCalls" = "UsageDay"."modelCalls" + EXCLUDED."modelCalls",
       "embeddingCalls" = "UsageDay"."embeddingCalls" + EXCLUDED."embeddingCalls",
       tokens = "UsageDay".tokens + EXCLUDED.tokens,
       "updatedAt" = now()
  `;
}

/** Tokens a model answer reports (`usage`), or 0. */
export const reportedTokens = (usage: { total_tokens?: number | null } | null | undefined) =>
  typeof usage?.total_tokens === "number" ? usage.total_tokens : 0;
