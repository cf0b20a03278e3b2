// Liveness and database check for load balancers and the test harness.
import { getDatabase } from "@/lib/db/client";

export const dynamic = "force-dynamic";

/**
 * The embedded database runs one statement at a time: a probe's `SELECT 1` waited behind a whole import's
 * transaction (a second and more), long enough for a load balancer to take a working server for a dead one. A
 * statement it answered this recently shows it alive without queuing behind its work.
 */
const ANSWERED_WITHIN_MS = 2_000;

export async function GET() {
  try {
    const { prisma, database } = await getDatabase();
    const answeredAt = database.activity?.lastAnsweredAt() ?? 0;
    if (!answeredAt || performance.now() - answeredAt > ANSWERED_WITHIN_MS)
      await prisma.$queryRaw<Array<{ ok: number }>>`SELECT 1 AS ok`;
    return Response.json({ ok: true });
  } catch {
    return Response.json({ ok: false }, { status: 503 });
  }
}
