// Model and embedding calls made for a user outside the chat turn (titles,
// summaries, learning, lessons, consolidation, embeddings) go through here:
// checked against the user's daily token limit before they run, and counted in
// the usage ledger after (lib/account/usage-ledger.ts). The chat turn counts
// its own calls (lib/chat/turn.ts).
import type { Db } from "@/lib/db/client";
import { recordUsage, reportedTokens } from "@/lib/account/usage-ledger";
import { backgroundAllowed } from "@/lib/account/usage-limits";

/** Whose allowance a call uses. */
export type Meter = { db: Db; userId: string };

/** The meter of a thread's owner (null when the thread is gone). */
export async function meterForThread(db: Db, threadId: string): Promise<Meter | null> {
  const t = await db.thread.findUnique({ where: { id: threadId }, select: { userId: true } });
  return t ? { db, userId: t.userId } : null;
}

export class UsageLimitSkip extends Error {
  constructor() {
    super("Skipped: the user has used today's token allowance (it resets at midnight UTC).");
  }
}

/**
 * Runs one model call for `meter`'s user, or throws UsageLimitSkip (nothing
 * called) when today's tokens are used up; records the call and its tokens.
 */
export async function metered<T extends { usage?: { total_tokens?: number | null } | null }>(
  meter: Meter,
  kind: "model" | "embedding",
  call: () => Promise<T>,
): Promise<T> {
  if (!(await backgroundAllowed(meter.db, meter.userId))) throw new UsageLimitSkip();
  const res = await call();
  await recordUsage(meter.db, meter.userId, {
    [kind === "model" ? "modelCalls" : "embeddingCalls"]: 1,
    tokens: reportedTokens(res.usage),
  }).catch((e) => console.error(`[mnemo] usage ledger: ${(e as Error).message.split("\n").slice(-1)[0]}`));
  return res;
}
