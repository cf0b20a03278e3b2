// Sweeps over memories (expiry, low-value expiry, procedures due for re-validation or used by a rated answer): each
// memory a sweep chose changes only if it still qualifies when written, in one transaction with the version that says
// why. A sweep reads its rows first and writes them one by one; the user may pin, use, verify, edit or delete one in
// between.
import type { Db } from "@/lib/db/client";
import type { MemoryActor, Prisma } from "@/lib/generated/prisma/client";

/** A sweep's archiving (expiry, consolidation): see changeWhere. Archived memories are restorable from the dashboard. */
export function archiveWhere(db: Db, userId: string, where: Prisma.MemoryWhereInput, reason: string) {
  return changeWhere(db, { ...where, userId }, { status: "archived" }, reason);
}

/**
 * A sweep's change to every memory matching `where`, each with a version saying why. Each memory changes only if it
 * still matches when written, in one transaction with its version: one the user pinned, used, verified, changed or
 * deleted after the sweep read it is left alone (and does not stop the sweep). Returns how many changed.
 */
export async function changeWhere(
  db: Db,
  where: Prisma.MemoryWhereInput,
  data: Prisma.MemoryUpdateManyMutationInput,
  reason: string,
  actor: MemoryActor = "model",
): Promise<number> {
  const rows = await db.memory.findMany({ where, select: { id: true } });
  let changed = 0;
  for (const { id } of rows) {
    const done = await db.$transaction(async (tx) => {
      const m = await tx.memory.findFirst({ where: { ...where, id }, select: { text: true, userId: true } });
      if (!m) return false;
      const r = await tx.memory.updateMany({ where: { ...where, id }, data });
      if (!r.count) return false;
      await tx.memoryVersion.create({
        data: { memoryId: id, userId: m.userId, oldText: m.text, newText: m.text, actor, reason },
      });
      return true;
    });
    if (done) changed++;
  }
  return changed;
}

/**
 * Optional expiry: archives the user's unpinned active memories not used (nor
 * changed) for `days` days, with a version saying why. Archived, not deleted:
 * the dashboard can restore them.
 */
export async function expireUnusedMemories(db: Db, userId: string, days: number, now = new Date()): Promise<number> {
  if (days <= 0) return 0;
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  return archiveWhere(
    db,
    userId,
    {
      status: "active",
      pinned: false,
      OR: [{ lastUsedAt: { lt: cutoff } }, { lastUsedAt: null, updatedAt: { lt: cutoff } }],
    },
    `Expired: unused for ${days} days`,
  );
}
