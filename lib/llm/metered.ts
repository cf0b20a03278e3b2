// Every model call made for a user is counted here, in the usage ledger (lib/account/usage-ledger.ts). Background
// calls (titles, summaries, learning, lessons, consolidation) run through `metered`: checked against the user's
// daily token limit before they run, counted after. An answer's calls (the web chat, `/v1`) are checked against
// the user's limits with the answer's context read, and counted by `meterAnswer` once the answer ends, however it
// ended (lib/answer/settle.ts).
import type { Db } from "@/lib/db/client";
import { recordUsage, reportedTokens } from "@/lib/account/usage-ledger";
import { backgroundAllowed } from "@/lib/account/usage-limits";

/** Whose allowance a call uses. */
export type Meter = { db: Db; userId: string };

/**
 * The meter of a thread's owner, or in a shared project of the member who started it: a project's own account has no
 * allowance of its own to run out (null when the thread is gone).
 */
export async function meterForThread(db: Db, threadId: string): Promise<Meter | null> {
  const t = await db.thread.findUnique({ where: { id: threadId }, select: { userId: true, authorId: true } });
  return t ? { db, userId: t.authorId ?? t.userId } : null;
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

/** Counts an answer's model calls and tokens (one turn), however the answer ended. */
export async function meterAnswer(meter: Meter, used: { modelCalls: number; tokens: number }): Promise<void> {
  await recordUsage(meter.db, meter.userId, { turns: 1, modelCalls: used.modelCalls, tokens: used.tokens }).catch((e) =>
    console.error(`[mnemo] usage ledger: ${(e as Error).message.split("\n").slice(-1)[0]}`),
  );
}
