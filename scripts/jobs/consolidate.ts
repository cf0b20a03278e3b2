// `npm run jobs:consolidate`: consolidates every user's long-term memory
// (lib/memory/consolidate.ts: merge duplicates, settle contradictions, expire
// low-value memories, mark stale procedures) and prints one JSON line of counts.
// Schedule it daily, like retention. Safe with several instances: each user's
// run is a queued job with a key shared by every instance for the hour, claimed
// with FOR UPDATE SKIP LOCKED, so one instance runs it and the others move on.
import { closeDb, getDb } from "@/lib/db/client";
import { claim, complete, enqueue, fail } from "@/lib/jobs/queue";
import { resolveConnection } from "@/lib/llm/connection";
import { consolidateUser, emptyCounts } from "@/lib/memory/consolidate";

async function main() {
  const db = await getDb();
  const started = new Date();
  const hour = started.toISOString().slice(0, 13);
  const users = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT DISTINCT "userId" AS id FROM "Memory" WHERE status = 'active'`,
  );
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
      const counts = await consolidateUser(db, String((job.payload as { userId: string }).userId), conn);
      for (const [k, v] of Object.entries(counts))
        if (typeof v === "number") totals[k as Exclude<keyof typeof counts, "more">] += v;
      totals.users++;
      await complete(db, job);
    } catch (e) {
      totals.failed++;
      await fail(db, job, (e as Error).message);
    }
  }
  console.log(
    JSON.stringify({
      at: started.toISOString(),
      model: conn ? conn.memoryModel : null,
      ...totals,
      seconds: (Date.now() - started.getTime()) / 1000,
    }),
  );
}

main()
  .catch((e) => {
    console.error(`jobs:consolidate failed: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb().then(() => process.exit()));
