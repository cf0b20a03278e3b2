// Where a memory came from may be gone: a memory keeps the ids of the chat and message it was learned from (no
// foreign key, so deleting a chat keeps its memories), and the chat may since have been deleted or the message
// undone or edited away. The dashboard then says so instead of linking to nothing.
import type { Db } from "@/lib/db/client";

export type SourceGone = "chat" | "message";

/** For each memory whose source chat or message no longer exists (among the user's own), which one is gone. */
export async function goneSources(
  db: Db,
  userId: string,
  memories: Array<{ id: string; sourceThreadId: string | null; sourceItemId: string | null }>,
): Promise<Map<string, SourceGone>> {
  const threadIds = [...new Set(memories.flatMap((m) => (m.sourceThreadId ? [m.sourceThreadId] : [])))];
  const itemIds = [...new Set(memories.flatMap((m) => (m.sourceItemId ? [m.sourceItemId] : [])))];
  const [threads, items] = await Promise.all([
    threadIds.length
      ? db.thread.findMany({ where: { id: { in: threadIds }, userId }, select: { id: true } })
      : Promise.resolve([]),
    itemIds.length
      ? db.item.findMany({ where: { id: { in: itemIds }, thread: { userId } }, select: { id: true } })
      : Promise.resolve([]),
  ]);
  const threadThere = new Set(threads.map((t) => t.id));
  const itemThere = new Set(items.map((i) => i.id));
  const gone = new Map<string, SourceGone>();
  for (const m of memories) {
    if (m.sourceThreadId && !threadThere.has(m.sourceThreadId)) gone.set(m.id, "chat");
    else if (m.sourceItemId && !itemThere.has(m.sourceItemId)) gone.set(m.id, "message");
  }
  return gone;
}
