// A real message for learning to come from: model-initiated memory changes name the message they were learned from,
// and one that does not exist (undone, cleared, never written) teaches nothing (lib/memory/writes.ts).
import type { Db } from "@/lib/db/client";
import { userContext } from "@/lib/user-context";
import { appendItems } from "@/lib/memory/session";

/** A new thread of the user's with one message of theirs: the ids an extraction names as its source. */
export async function exchangeIds(db: Db, userId: string, content = "Something worth remembering") {
  const threadId = (await db.thread.create({ data: { userId } })).id;
  const u = await userContext(db, userId);
  const [item] = await appendItems(db, threadId, [{ role: "user", content }], { cipher: u.cipher });
  return { threadId, userItemId: item.id };
}
