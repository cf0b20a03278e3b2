// What a person contributed to shared projects, for their export: each project they belong to (its name, their role,
// when they joined), its history entries that name them, and, marked as contributed, the chats they started there
// and the memories they taught it. These rows are the project's (lib/projects/access.ts), read with its key.
import { openJson } from "@/lib/crypto/content";
import { readBytes } from "@/lib/attachments/file-store";
import { userContext, type UserContext } from "@/lib/user-context";

export type Contribution = {
  /** ProjectMember's key in the export: the project's id. */
  projectId: string;
  contributed: true;
  name: string;
  role: string;
  joinedAt: Date;
  chats: Array<{ id: string; title: string | null; createdAt: Date; items: Array<Record<string, unknown>> }>;
  /** The files they sent in those chats, and those they uploaded there and never sent (base64, with their text). */
  files: Array<Record<string, unknown>>;
  memories: Array<{ id: string; text: string; kind: string; status: string; source: string; createdAt: Date }>;
};

/** Every shared project the user is in, with what they put into it. */
export async function contributionsOf(u: UserContext): Promise<Contribution[]> {
  const { db, userId } = u;
  const memberships = await db.projectMember.findMany({
    where: { userId },
    select: { projectId: true, role: true, joinedAt: true, project: { select: { userId: true, name: true } } },
    orderBy: { joinedAt: "asc" },
  });
  const out: Contribution[] = [];
  for (const m of memberships) {
    const p = await userContext(db, m.project.userId, undefined, userId);
    const c = p.cipher;
    const [threads, memories, files] = await Promise.all([
      db.thread.findMany({
        where: { projectId: m.projectId, authorId: userId },
        orderBy: { createdAt: "asc" },
        select: {
          id: true,
          title: true,
          createdAt: true,
          items: { orderBy: { position: "asc" }, omit: { searchTokens: true } },
        },
      }),
      db.memory.findMany({
        where: { projectId: m.projectId, addedById: userId },
        orderBy: { createdAt: "asc" },
        select: { id: true, text: true, kind: true, status: true, source: true, createdAt: true },
      }),
      db.attachment.findMany({
        where: {
          userId: m.project.userId,
          OR: [{ thread: { projectId: m.projectId, authorId: userId } }, { addedById: userId, itemId: null }],
        },
        orderBy: { createdAt: "asc" },
      }),
    ]);
    out.push({
      projectId: m.projectId,
      contributed: true,
      name: c.open(m.project.name),
      role: m.role,
      joinedAt: m.joinedAt,
      chats: threads.map((t) => ({
        id: t.id,
        title: t.title === null ? null : c.open(t.title),
        createdAt: t.createdAt,
        items: t.items.map((i) => ({ ...i, content: c.open(i.content), toolCalls: openJson(c, i.toolCalls as never) })),
      })),
      memories: memories.map((x) => ({ ...x, text: c.open(x.text) })),
      files: await Promise.all(
        files.map(async (f) => ({
          ...f,
          name: c.open(f.name),
          data: (await readBytes(c, f)).toString("base64"),
          text: f.text === null ? null : c.open(f.text),
        })),
      ),
    });
  }
  return out;
}

/** A shared project's history entries naming the user (kept also for projects they have left). */
export async function historyNaming(u: UserContext) {
  const rows = await u.db.projectEvent.findMany({
    where: { OR: [{ actorId: u.userId }, { subjectId: u.userId }] },
    orderBy: { at: "asc" },
    select: { id: true, projectId: true, at: true, kind: true, role: true, actorId: true, subjectId: true },
  });
  return rows.map((r) => ({
    id: r.id,
    projectId: r.projectId,
    at: r.at,
    kind: r.kind,
    role: r.role,
    you: r.actorId === u.userId && r.subjectId === u.userId ? "both" : r.actorId === u.userId ? "actor" : "subject",
  }));
}

/** Invitations the user sent that still wait, and any waiting for their own address (their id: project and address). */
export async function invitesOf(u: UserContext) {
  const me = await u.db.user.findUnique({ where: { id: u.userId }, select: { email: true } });
  const rows = await u.db.projectInvite.findMany({
    where: { OR: [{ invitedById: u.userId }, ...(me ? [{ email: me.email }] : [])] },
    orderBy: { createdAt: "asc" },
  });
  return rows.map((r) => ({ id: `${r.projectId}:${r.email}`, ...r }));
}
