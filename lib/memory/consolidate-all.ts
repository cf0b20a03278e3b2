// Consolidates every user's long-term memory once (`npm run jobs:consolidate`):
// each user's run is a queued job with a key shared by every instance for the
// hour, claimed with FOR UPDATE SKIP LOCKED, so with several instances one runs
// it and the others move on. Returns the summed counts.
import type { Db } from "@/lib/db/client";
import { userContext } from "@/lib/user-context";
import { claim, complete, enqueue, fail } from "@/lib/jobs/queue";
import { resolveConnection } from "@/lib/llm/connection";
import { consolidateUser, emptyCounts } from "./consolidate";

export async function consolidateAll(db: Db) {
  const started = new Date();
  const hour = started.toISOString().slice(0, 13);
  const users = await db.$queryRaw<Array<{ id: string }>>`
    SELECT DISTINCT "userId" AS id FROM "Memory" WHERE status = 'active'
  `;
  await enqueue(
    db,
    users.map((u) => ({
      kind: "consolidate" as const,
      userId: u.id,
      payload: { userId: u.id },
      dedupeKey: `consolidate:${u.id}:cli:${hour}`,
    })),
  );
  const state = await resolveConnection(db);
  const conn = state.configured ? state.connection : null;
  const totals = { users: 0, failed: 0, ...emptyCounts() };
  for (;;) {
    const [job] = await claim(db, 1, ["consolidate"]);
    if (!job) break;
    try {
      const counts = await consolidateUser(
        await userContext(db, String((job.payload as { userId: string }).userId)),
        conn,
      );
      for (const [k, v] of Object.entries(counts))
        if (typeof v === "number") totals[k as Exclude<keyof typeof counts, "more">] += v;
      totals.users++;
      await complete(db, job);
    } catch (e) {
      totals.failed++;
      await fail(db, job, (e as Error).message);
    }
  }
  return {
    at: started.toISOString(),
    model: conn ? conn.memoryModel : null,
    ...totals,
    seconds: (Date.now() - started.getTime()) / 1000,
  };
}
