// Conflicts the user decides: two active memories of equal standing (both said
// or written by the user) that consolidation found contradictory. The
// dashboard asks which is true now; the answer is recorded as versions.
import { NotFoundError } from "@/lib/errors";
import type { UserContext } from "@/lib/user-context";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { ChangedMeanwhile, retireMemory } from "./store";

export type Conflict = {
  a: { id: string; text: string; createdAt: string };
  b: { id: string; text: string; createdAt: string };
};

/** Open conflicts, older statement first in each pair. */
export async function listConflicts(u: UserContext): Promise<Conflict[]> {
  const { db, userId } = u;
  const rows = await db.memory.findMany({
    where: { userId, status: "active", conflictWithId: { not: null } },
    select: { id: true, text: true, createdAt: true, conflictWithId: true },
    orderBy: { createdAt: "asc" },
  });
  const c = u.cipher;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out: Conflict[] = [];
  for (const r of rows) {
    const other = byId.get(r.conflictWithId!);
    // Each pair once (from its older side); a pair whose other side is gone is no conflict.
    if (
      !other ||
      other.conflictWithId !== r.id ||
      other.createdAt < r.createdAt ||
      (other.createdAt.getTime() === r.createdAt.getTime() && other.id < r.id)
    )
      continue;
    const view = (m: typeof r) => ({ id: m.id, text: c.open(m.text), createdAt: m.createdAt.toISOString() });
    out.push({ a: view(r), b: view(other) });
  }
  return out;
}

/**
 * Marks two active memories as contradicting each other, for the user to decide (consolidation). Both or neither:
 * when one is no longer active (the user deleted or archived it meanwhile) nothing changes. Returns whether marked.
 */
export async function markConflict(db: Db, userId: string, aId: string, bId: string): Promise<boolean> {
  try {
    await db.$transaction(async (tx) => {
      for (const [x, y] of [
        [aId, bId],
        [bId, aId],
      ]) {
        const r = await tx.memory.updateMany({
          where: { id: x, userId, status: "active" },
          data: { conflictWithId: y },
        });
        if (!r.count) throw new ChangedMeanwhile();
      }
    });
    return true;
  } catch (e) {
    if (e instanceof ChangedMeanwhile) return false;
    throw e;
  }
}

export const settleInput = z.object({
  memoryId: z.string().min(1).max(64),
  otherId: z.string().min(1).max(64),
  keep: z.enum(["memory", "other", "both"]),
});

/**
 * Keeps one (the other is archived, restorable, with a version naming the one kept) or both (the conflict is closed).
 */
export async function settleConflict(db: Db, userId: string, input: z.input<typeof settleInput>): Promise<void> {
  const { memoryId, otherId, keep } = settleInput.parse(input);
  const pair = await db.memory.findMany({
    where: { id: { in: [memoryId, otherId] }, userId, status: "active" },
    select: { id: true, text: true, conflictWithId: true },
  });
  const m = pair.find((x) => x.id === memoryId);
  const o = pair.find((x) => x.id === otherId);
  if (!m || !o || m.conflictWithId !== o.id) throw new NotFoundError("memory");
  if (keep === "both") {
    // Each side changes only while it is still active and in this conflict: one the user deleted, edited or settled
    // in another tab meanwhile makes the whole answer "not found", never half of it.
    await db.$transaction(async (tx) => {
      for (const [x, y] of [
        [m, o],
        [o, m],
      ]) {
        const r = await tx.memory.updateMany({
          where: { id: x.id, userId, status: "active", conflictWithId: y.id, text: x.text },
          data: { conflictWithId: null },
        });
        if (!r.count) throw new NotFoundError("memory");
        await tx.memoryVersion.create({
          data: {
            memoryId: x.id,
            userId,
            oldText: x.text,
            newText: x.text,
            actor: "user",
            reason: "You kept both: both are true",
          },
        });
      }
    });
    return;
  }
  const [kept, dropped] = keep === "memory" ? [m, o] : [o, m];
  const done = await retireMemory(
    db,
    userId,
    kept.id,
    dropped.id,
    "You chose the other memory as true now",
    "user",
    true,
  );
  if (!done) throw new NotFoundError("memory");
}
