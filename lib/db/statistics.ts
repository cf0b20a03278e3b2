// Planner statistics for the embedded database. PostgreSQL's autovacuum keeps
// them current on a server; PGlite runs no autovacuum, so without this its
// planner would plan every query as if the tables were empty, and recall and
// the history window would read whole tables once a history grows. ANALYZE
// samples each table (about 30,000 rows), so its cost stays bounded.
import { getDatabase } from "./client";

export const ANALYZE_EVERY_MS = 30 * 60_000;
/** A bulk write this large (an import) refreshes them at once instead of at the next half hour. */
export const ANALYZE_AFTER_ROWS = 1_000;

/** Refreshes the embedded database's statistics; does nothing on PostgreSQL (autovacuum does it). */
export async function refreshStatistics(): Promise<boolean> {
  const { prisma, database } = await getDatabase();
  if (database.target.kind !== "pglite") return false;
  await prisma.$executeRawUnsafe("ANALYZE");
  return true;
}
