// One user's context for a request or a job: the database handle, who the user
// is, and their content cipher (lib/crypto/content.ts). Made once where the
// request or job starts (a server action, a route, a job handler, a command)
// and passed down: the data modules take it and never look the user's key up
// themselves.
import type { Db } from "@/lib/db/types";
import { cipherFor, type ContentCipher } from "@/lib/crypto/content";

export type UserContext = { readonly db: Db; readonly userId: string; readonly cipher: ContentCipher };

export async function userContext(db: Db, userId: string): Promise<UserContext> {
  return { db, userId, cipher: await cipherFor(db, userId) };
}

/** The same user's context on another handle (a transaction's client): the cipher is kept. */
export const onHandle = (u: UserContext, db: Db): UserContext => ({ ...u, db });

/** The context of a thread's owner (jobs that know only the thread), or null when the thread is gone. */
export async function threadOwnerContext(db: Db, threadId: string): Promise<UserContext | null> {
  const t = await db.thread.findUnique({ where: { id: threadId }, select: { userId: true } });
  return t ? userContext(db, t.userId) : null;
}
