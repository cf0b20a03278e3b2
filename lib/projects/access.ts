// Who may do what in a project: the one rule, for every way in.
//
// A private project and its chats and memories are its user's rows. A shared project's rows belong to the project's
// own account (User.kind "project"): they are sealed under its key, its settings (learning paused, review) are the
// project's, and nobody signs in as it. A member acts on them through the context this module hands out, whose
// `userId` is the project's account and whose `actorId` is the member (session checks, limits and "who did it" use
// the actor). Roles: a viewer reads chats and memories; an editor also chats, teaches and edits memories, and
// invites editors and viewers; the owner also changes roles, removes people, transfers the project and deletes it.
// A chat is continued by its author alone (an editor or the owner): it is one person's conversation that the others
// read. Someone who is not a member finds "not found", exactly as for a project that does not exist.
import { Prisma } from "@/lib/generated/prisma/client";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import { exactScope, projectScope } from "@/lib/projects/scope";
import { userContext, type UserContext } from "@/lib/user-context";

export type ProjectRole = "owner" | "editor" | "viewer";
/** What an action needs: to read, to write (chat, teach, edit memories), or to own (members, deleting). */
export type Need = "read" | "write" | "own";

const RANK: Record<ProjectRole, number> = { viewer: 0, editor: 1, owner: 2 };
const NEEDS: Record<Need, number> = { read: 0, write: 1, own: 2 };
export const mayDo = (role: ProjectRole, need: Need) => RANK[role] >= NEEDS[need];

const REFUSED: Record<Need, string> = {
  read: "You do not have access to this project.",
  write: "Viewers can read this project's chats and memories but not change them.",
  own: "Only the project's owner can do that.",
};

/** Refuses an access whose role is too small for `need` (the functions that take an access check it again). */
export function assertMay(a: { role: ProjectRole }, need: Need) {
  if (!mayDo(a.role, need)) throw new ForbiddenError(REFUSED[need]);
}

export type ProjectAccess = {
  projectId: string;
  shared: boolean;
  role: ProjectRole;
  /** The context whose rows the project's are (the project's account for a shared one), acting as the member. */
  content: UserContext;
};

/** A member's context on a shared project's rows: its own memories alone, read-only for a viewer. */
async function memberContext(u: UserContext, accountId: string, projectId: string, role: ProjectRole) {
  const content = await userContext(u.db, accountId, exactScope(projectId), u.actorId);
  return role === "viewer" ? { ...content, readOnly: true } : content;
}

/** The actor's membership test, as a Prisma filter on Project. */
const reachable = (actorId: string) => ({
  OR: [
    { userId: actorId, shared: false },
    { shared: true, members: { some: { userId: actorId } } },
  ],
});

/** The project as `u` may reach it for `need`; "not found" for a non-member, "forbidden" for too small a role. */
export async function projectAccess(u: UserContext, projectId: string, need: Need): Promise<ProjectAccess> {
  const actorId = u.actorId;
  const p = await u.db.project.findFirst({
    where: { id: projectId, ...reachable(actorId) },
    select: { id: true, userId: true, shared: true, members: { where: { userId: actorId }, select: { role: true } } },
  });
  if (!p) throw new NotFoundError("project");
  const role: ProjectRole = p.shared ? p.members[0].role : "owner";
  assertMay({ role }, need);
  const content = p.shared ? await memberContext(u, p.userId, p.id, role) : u;
  return { projectId: p.id, shared: p.shared, role, content };
}

export type ThreadAccess = {
  /** The context whose rows the thread's are, acting as the member, in the thread's memory scope. */
  content: UserContext;
  /** In a shared project: the member's role; null for the user's own thread outside one. */
  role: ProjectRole | null;
  /** Whether the actor may continue it (send, edit, regenerate, stop): its author, an editor or owner. */
  mayContinue: boolean;
  /** Who started it, in a shared project (null: the user's own thread). */
  authorId: string | null;
};

/**
 * The thread as `u` may reach it: their own, or a shared project's that is not another member's private chat.
 * `continue` refuses a thread the actor may only read.
 */
export async function threadAccess(u: UserContext, threadId: string, need: "read" | "continue"): Promise<ThreadAccess> {
  const actorId = u.actorId;
  const t = await u.db.thread.findFirst({
    where: { id: threadId, OR: [{ userId: actorId }, sharedThreadWhere(actorId)] },
    select: {
      userId: true,
      authorId: true,
      project: {
        select: {
          id: true,
          shared: true,
          memoryMode: true,
          members: { where: { userId: actorId }, select: { role: true } },
        },
      },
    },
  });
  if (!t) throw new NotFoundError("thread");
  const shared = !!t.project?.shared && t.userId !== actorId;
  if (!shared) {
    const content = t.userId === u.userId ? u : await userContext(u.db, t.userId, u.scope, actorId);
    return { content: { ...content, scope: projectScope(t.project) }, role: null, mayContinue: true, authorId: null };
  }
  const role = t.project!.members[0].role;
  const mayContinue = t.authorId === actorId && mayDo(role, "write");
  if (need === "continue" && !mayContinue)
    throw new ForbiddenError(
      mayDo(role, "write") ? "Only the person who started this chat can continue it." : REFUSED.write,
    );
  if (SEEN_SHARED.size >= SEEN_MAX) SEEN_SHARED.delete(SEEN_SHARED.keys().next().value!);
  SEEN_SHARED.set(threadId, { accountId: t.userId, projectId: t.project!.id });
  const content = await memberContext(u, t.userId, t.project!.id, role);
  return { content, role, mayContinue, authorId: t.authorId };
}

/** The actor's context on each shared project they are in (to search their chats beside the actor's own). */
export async function sharedProjectContexts(u: UserContext): Promise<UserContext[]> {
  const memberships = await u.db.projectMember.findMany({
    where: { userId: u.actorId, project: { shared: true } },
    select: { role: true, project: { select: { id: true, userId: true } } },
  });
  return Promise.all(memberships.map((m) => memberContext(u, m.project.userId, m.project.id, m.role)));
}

/** The context to act on an answer in (rating it): its thread's, which the actor must be able to continue. */
export async function answerContext(u: UserContext, itemId: string): Promise<UserContext> {
  const item = await u.db.item.findUnique({ where: { id: itemId }, select: { threadId: true } });
  if (!item) throw new NotFoundError("answer");
  return (await threadAccess(u, item.threadId, "continue")).content;
}

/**
 * The context a file is opened or removed in: the user's own; a file of a chat they may read; or, in a shared
 * project they may write in, their own unsent upload. Anything else is "not found".
 */
export async function fileContext(u: UserContext, attachmentId: string): Promise<UserContext> {
  const f = await u.db.attachment.findUnique({
    where: { id: attachmentId },
    select: { userId: true, threadId: true, addedById: true },
  });
  if (!f || f.userId === u.userId) return u; // the user's own, or nobody's: the reader says "not found"
  if (f.threadId) return (await threadAccess(u, f.threadId, "read")).content;
  const p = await u.db.project.findFirst({ where: { userId: f.userId, shared: true }, select: { id: true } });
  if (!p || f.addedById !== u.actorId) throw new NotFoundError("item");
  return (await projectAccess(u, p.id, "write")).content;
}

// Threads this instance has seen in shared projects, with the project's account: a guess of whose key a next turn
// writes under, never a permission (the append checks who may continue the thread in its own statement). Bounded.
const SEEN_SHARED = new Map<string, { accountId: string; projectId: string }>();
const SEEN_MAX = 10_000;

/** The project's context for a thread seen shared here before (no read), or null. */
export async function sharedThreadContext(me: UserContext, threadId: string): Promise<UserContext | null> {
  const seen = SEEN_SHARED.get(threadId);
  return seen ? userContext(me.db, seen.accountId, exactScope(seen.projectId), me.actorId) : null;
}

/**
 * Where a new message lands (a chat turn, an edit, a regeneration): a thread the user may continue, or a new chat
 * in a project they may write in; otherwise the user's own rows.
 */
export async function writeContext(me: UserContext, to: { threadId?: string; projectId?: string }) {
  if (to.threadId) return (await threadAccess(me, to.threadId, "continue")).content;
  if (to.projectId) return (await projectAccess(me, to.projectId, "write")).content;
  return me;
}

/** A shared project's threads the actor may read, as a Prisma filter on Thread (not the user's own threads). */
export const sharedThreadWhere = (actorId: string) => ({
  project: { shared: true, members: { some: { userId: actorId } } },
  OR: [{ private: false }, { authorId: actorId }],
});

/**
 * The threads the actor may continue, as a Prisma filter: their own, or one they started in a shared project where
 * they are still an editor or the owner (Stop uses it; the append states it in SQL: `mayContinueSql`).
 */
export const continuableThreadWhere = (actorId: string) => ({
  OR: [
    { userId: actorId },
    {
      authorId: actorId,
      project: {
        shared: true,
        members: { some: { userId: actorId, role: { in: ["owner", "editor"] as ProjectRole[] } } },
      },
    },
  ],
});

/** The same rule in SQL, on thread alias `t` and the actor's id: the append checks it in its own statement. */
export const mayContinueSql = (actor: Prisma.Sql) => Prisma.sql`(
  t."userId" = ${actor}
  OR (t."authorId" = ${actor} AND EXISTS (
    SELECT 1 FROM "ProjectMember" pm JOIN "Project" pr ON pr.id = pm."projectId"
    WHERE pm."projectId" = t."projectId" AND pr.shared AND pm."userId" = ${actor} AND pm.role IN ('owner', 'editor')
  ))
)`;
