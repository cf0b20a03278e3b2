// Liveness and database check for load balancers and the test harness.
import { getDb } from "@/lib/db/client";

export const dynamic = "force-dynamic";

export async function GET() {
  try {
    const db = await getDb();
    await db.$queryRaw<Array<{ ok: number }>>`SELECT 1 AS ok`;
    return Response.json({ ok: true });
  } catch {
    return Response.json({ ok: false }, { status: 503 });
  }
}
