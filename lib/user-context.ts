// One user's context for a request or a job: the database handle, who the user
// is, their content cipher (lib/crypto/content.ts) and their memory settings.
// Made once where the request or job starts (a server action, a route, a job
// handler, a command) and passed down: the data modules take it and never look
// the user's key or settings up themselves.
import type { Db } from "@/lib/db/types";
import { cipherFor, type ContentCipher } from "@/lib/crypto/content";
import { GENERAL_SCOPE, projectScope, type MemoryScope } from "@/lib/projects/scope";

/** What the user decided about learning: paused (nothing is learned), review (the model only proposes). */
export type MemorySettings = { paused: boolean; review: boolean };

export type UserContext = {
  readonly db: Db;
  /** Whose rows these are: the user's, or a shared project's own account (lib/projects/access.ts). */
  readonly userId: string;
  /**
   * Who is acting: the signed-in user (or a key's owner). The same as `userId` except in a shared project, where the
   * rows are the project's and the actor is a member: session checks, limits and authorship use it.
   */
  readonly actorId: string;
  readonly cipher: ContentCipher;
  /**
   * The user's memory settings as they are now. Read at each call, not once: a pause the user sets while a job or an
   * agent run is under way stops its next write. (The chat turn reads them in its append statement instead.)
   */
  settings(): Promise<MemorySettings>;
  /**
   * Which memories and conversations recall, the memory tools and learning may reach (lib/projects/scope.ts): a
   * project thread's work is scoped to it; everything else has general scope.
   */
  readonly scope: MemoryScope;
  /** A shared project's viewer: reads only; the memory tools refuse to write (lib/projects/access.ts sets it). */
  readonly readOnly?: boolean;
};

export async function userContext(
  db: Db,
  userId: string,
  scope = GENERAL_SCOPE,
  actorId = userId,
): Promise<UserContext> {
  const cipher = await cipherFor(db, userId);
  return { db, userId, actorId, cipher, settings: () => memorySettings(db, userId), scope };
}

async function memorySettings(db: Db, userId: string): Promise<MemorySettings> {
  const u = await db.user.findUnique({ where: { id: userId }, select: { memoryPaused: true, memoryReview: true } });
  return { paused: !!u?.memoryPaused, review: !!u?.memoryReview };
}

/** A member acting on a shared project's rows (lib/projects/access.ts): the rows are not the actor's own. */
export const inSharedProject = (u: Pick<UserContext, "userId" | "actorId">) => u.actorId !== u.userId;

/** The same user's context on another handle (a transaction's client): the cipher is kept. */
export const onHandle = (u: UserContext, db: Db): UserContext => ({ ...u, db });

/** The same user's context in another memory scope (a project's thread). */
export const inMemoryScope = (u: UserContext, scope: MemoryScope): UserContext => ({ ...u, scope });

/**
 * The context of a thread's owner (jobs that know only the thread), in the thread's scope; null when it is gone.
 * A shared project's thread is its project's (its own memories alone), acting as the chat's author.
 */
export async function threadOwnerContext(db: Db, threadId: string): Promise<UserContext | null> {
  const t = await db.thread.findUnique({
    where: { id: threadId },
    select: { userId: true, authorId: true, project: { select: { id: true, memoryMode: true, shared: true } } },
  });
  if (!t) return null;
  const scope = projectScope(t.project);
  return userContext(db, t.userId, scope, t.authorId ?? t.userId);
}
