// Taking back a model's change when the message behind it is undone: its rewrite of a memory, or its "no longer
// true" / "forget". Each is one conditional write that lands only if nothing changed the memory since. Reached through
// the gate (./writes.ts withdrawLearnedFrom).
import { z } from "zod";
import type { UserContext } from "@/lib/user-context";
import { countTokens } from "./tokens";
import { outdatesAbout, storedText } from "./store";

/**
 * Takes back a model's last rewrite of a memory (the message behind it was undone): the text before comes back, and
 * when the rewrite closed that text as past ("they moved"), the past copy it made goes and the memory is again true
 * since when the old text was. Nothing happens (false) when the last change is not a model's rewrite learned from one
 * of `itemIds` (its version names the message), or anything has changed the memory since. One transaction, whose
 * write only lands if no change came in between.
 */
export async function revertModelRewrite(
  u: UserContext,
  id: string,
  itemIds: string[],
  reason: string,
): Promise<boolean> {
  const { db, userId } = u;
  const c = u.cipher;
  const m = await db.memory.findFirst({
    where: { id, userId },
    include: { versions: { orderBy: { createdAt: "desc" }, take: 1 } },
  });
  const last = m?.versions[0];
  if (!m || !last || last.actor !== "model" || last.oldText === null || last.newText === null) return false;
  // A consolidation's or another turn's rewrite since is not this one.
  if (!last.sourceItemId || !itemIds.includes(last.sourceItemId)) return false;
  const before = c.open(last.oldText);
  const now = c.open(m.text);
  if (c.open(last.newText) !== now || before === now) return false;
  // The past copy that rewrite made: superseded by this memory, closed when the rewrite was written.
  const closed = await db.memory.findFirst({
    where: {
      userId,
      supersededById: m.id,
      status: "past",
      validUntil: { gte: new Date(last.createdAt.getTime() - 5_000), lte: new Date(last.createdAt.getTime() + 5_000) },
    },
    orderBy: { validUntil: "desc" },
  });
  const done = await db.$transaction(async (tx) => {
    // Still as that rewrite left it: else the later change stands.
    const { count } = await tx.memory.updateMany({
      where: { id: m.id, userId, versions: { none: { createdAt: { gt: last.createdAt } } } },
      data: {
        ...storedText(c, before),
        tokens: countTokens(before),
        ...(closed
          ? {
              // True since it was written (validSince's reading of no date) stays no date.
              validFrom: closed.validFrom?.getTime() === m.createdAt.getTime() ? null : closed.validFrom,
              sourceThreadId: closed.sourceThreadId,
              sourceItemId: closed.sourceItemId,
            }
          : sourceBefore(last.sourceBefore)),
      },
    });
    if (!count) return false;
    if (closed) await tx.memory.delete({ where: { id: closed.id } });
    await tx.memoryVersion.create({
      data: { memoryId: m.id, userId, oldText: c.seal(now), newText: c.seal(before), actor: "user", reason },
    });
    return true;
  });
  if (done) await outdatesAbout(db, m);
  return done;
}

const SOURCE_BEFORE = z.object({ threadId: z.string().nullable(), itemId: z.string().nullable() });

/** The source a text change recorded as the memory's before it (none recorded: an older version, left as it is). */
function sourceBefore(recorded: string | null): { sourceThreadId?: string | null; sourceItemId?: string | null } {
  const was = SOURCE_BEFORE.safeParse(recorded ? JSON.parse(recorded) : null);
  return was.success ? { sourceThreadId: was.data.threadId, sourceItemId: was.data.itemId } : {};
}

/**
 * Takes back a model's "no longer true" or "forget" (version `versionId`, the message behind it was undone): the
 * memory is current again, as it was before. Nothing happens (false) when anything has changed the memory since, or
 * that version did not change its status. One conditional write, so a change made meanwhile is never overwritten.
 */
export async function revertModelStatusChange(
  u: UserContext,
  memoryId: string,
  versionId: string,
  reason: string,
): Promise<boolean> {
  const { db, userId } = u;
  const m = await db.memory.findFirst({
    where: { id: memoryId, userId, status: { in: ["past", "archived"] } },
    include: { versions: { orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 1 } },
  });
  const last = m?.versions[0];
  if (!m || !last || last.id !== versionId || last.actor !== "model" || last.oldText !== last.newText) return false;
  const ended = m.status === "past";
  const done = await db.$transaction(async (tx) => {
    // Still as that version left it (no edit, restore or review in between): else the user's later change stands.
    const { count } = await tx.memory.updateMany({
      where: { id: m.id, userId, status: m.status, versions: { none: { createdAt: { gt: last.createdAt } } } },
      data: {
        status: "active",
        // True since it was learned reads as no date, as before the change gave it one.
        ...(ended
          ? { validUntil: null, validFrom: m.validFrom?.getTime() === m.createdAt.getTime() ? null : m.validFrom }
          : {}),
      },
    });
    if (count)
      await tx.memoryVersion.create({
        data: { memoryId: m.id, userId, oldText: m.text, newText: m.text, actor: "user", reason },
      });
    return count > 0;
  });
  if (done) await outdatesAbout(db, { ...m, status: "active" });
  return done;
}
