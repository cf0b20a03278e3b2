// The embedded database has no autovacuum: the app refreshes its planner
// statistics itself, or every plan would assume empty tables.
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDatabase } from "@/lib/db/client";
import { refreshStatistics } from "@/lib/db/statistics";

describe("planner statistics on the embedded database", () => {
  afterAll(async () => closeDb());

  it("ANALYZE fills pg_stats for the message table", async () => {
    const { prisma } = await getDatabase();
    const user = await prisma.user.create({ data: { email: "stats@example.com" } });
    const thread = await prisma.thread.create({ data: { userId: user.id } });
    await prisma.$executeRawUnsafe(
      `INSERT INTO "Item" (id, "threadId", "userId", position, role, content, "updatedAt")
       SELECT 'st' || g, $1::text, $2::text, g, 'user', 'message number ' || g, now() FROM generate_series(1, 300) g`,
      thread.id,
      user.id,
    );
    const stats = () =>
      prisma.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM pg_stats WHERE tablename = 'Item'`);
    expect((await stats())[0].n).toBe(0);
    expect(await refreshStatistics()).toBe(true);
    expect((await stats())[0].n).toBeGreaterThan(0);
  });
});
