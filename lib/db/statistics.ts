// Planner statistics for the embedded database. PostgreSQL's autovacuum keeps
// them current on a server; PGlite runs no autovacuum, so without this its
// planner would plan every query as if the tables were empty, and recall and
// the history window would read whole tables once a history grows. ANALYZE
// samples each table (about 30,000 rows), so its cost stays bounded.
// Autovacuum also merges the search indexes' pending lists: a GIN index puts
// new entries in a list that every search reads linearly until it is merged
// (by VACUUM, or once it passes 4 MB). Without it, every turn of a PGlite user
// would read thousands of recent messages' entries (measured: half of the
// passage search's time at 10,000 messages), so the same schedule merges them.
import { Prisma } from "@/lib/generated/prisma/client";
import { getDatabase } from "./client";

/** What autovacuum does for recall on a server: planner statistics, and the search indexes' pending entries merged. */
export const UPKEEP_SQL = [
  Prisma.sql`ANALYZE`,
  Prisma.sql`SELECT gin_clean_pending_list('"Item_search_idx"'::regclass)`,
  Prisma.sql`SELECT gin_clean_pending_list('"Memory_search_idx"'::regclass)`,
];

export const ANALYZE_EVERY_MS = 30 * 60_000;
/** A bulk write this large (an import) refreshes them at once instead of at the next half hour. */
export const ANALYZE_AFTER_ROWS = 1_000;

/** Refreshes the embedded database's statistics; does nothing on PostgreSQL (autovacuum does it). */
export async function refreshStatistics(): Promise<boolean> {
  const { prisma, database } = await getDatabase();
  if (database.target.kind !== "pglite") return false;
  for (const sql of UPKEEP_SQL) await prisma.$executeRaw(sql);
  return true;
}
