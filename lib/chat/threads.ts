// Threads as the user sees them. Every function takes the signed-in user's id
// and only ever touches that user's rows; another user's thread looks exactly
// like a thread that does not exist.
import { attachmentsInView, type AttachmentMeta, type SourceView } from "@/lib/attachments/store";
import { offeredModel } from "@/lib/llm/connection";
import { NotFoundError } from "@/lib/errors";
import { projectGone } from "@/lib/projects/projects";
import type { ThreadAccess } from "@/lib/projects/access";
import type { UserContext } from "@/lib/user-context";
import type { MemoryShown } from "@/lib/answer/settle";
import { actorContext } from "@/lib/projects/own-memory";
import { feedbackFor, type AnswerFeedback } from "@/lib/memory/feedback";
import { z } from "zod";
import { sweepExpiredAnswers } from "./leases";
import { cleanText } from "@/lib/text/policy";
import type { Db } from "@/lib/db/client";
import { temporaryCutoff } from "@/lib/account/retention";
import { PrismaSession, pathItems, type SessionItem } from "@/lib/memory/session";
import { withdrawLearnedFrom } from "@/lib/memory/writes";

export { NotFoundError };

export const threadIdSchema = z.string().trim().min(1).max(64);
export const titleSchema = z
  .string()
  .transform(cleanText)
  .pipe(z.string().trim().min(1, "A title cannot be empty.").max(120, "A title is at most 120 characters."));

export type ThreadSummary = {
  id: string;
  title: string | null;
  lastActivityAt: string;
  archived: boolean;
  projectId: string | null;
  /** Made through /v1 with this key (its name), or null. */
  via: string | null;
  /** In a shared project: the member who started it (null: the user's own thread). */
  authorId?: string | null;
};

export async function createThread(
  u: UserContext,
  opts: {
    temporary?: boolean;
    title?: string;
    projectId?: string | null;
    model?: string | null;
    private?: boolean;
  } = {},
) {
  const { db, userId } = u;
  // A thread goes only into a project of the same user's (a shared project's account, for a member: its author).
  if (opts.projectId && !(await db.project.findFirst({ where: { id: opts.projectId, userId }, select: { id: true } })))
    throw new NotFoundError("project");
  const member = u.actorId !== userId;
  if (!member) await db.thread.deleteMany({ where: { userId, temporary: true } });
  const c = u.cipher;
  return db.thread
    .create({
      data: {
        userId,
        authorId: member ? u.actorId : null,
        // Only in a shared project does a chat need hiding from others: elsewhere nobody else sees it anyway.
        private: member && !!opts.private,
        temporary: !!opts.temporary,
        title: opts.title === undefined ? undefined : c.seal(opts.title),
        projectId: opts.projectId ?? null,
        model: opts.model ?? null,
      },
    })
    .catch(projectGone);
}

export async function ownedThread(db: Db, userId: string, threadId: string) {
  const t = await db.thread.findFirst({
    where: { id: threadId, userId },
    include: { project: { select: { id: true, name: true, model: true } }, apiKey: { select: { name: true } } },
  });
  if (!t) throw new NotFoundError("thread");
  // Temporary chats end when their user starts another chat, or after MNEMO_TEMPORARY_CHAT_HOURS.
  if (t.temporary && t.createdAt < temporaryCutoff()) {
    await db.thread.delete({ where: { id: t.id } });
    throw new NotFoundError("thread");
  }
  return t;
}

export async function openSession(u: UserContext, threadId: string): Promise<PrismaSession> {
  await ownedThread(u.db, u.userId, threadId);
  return new PrismaSession(u.db, threadId, u.cipher);
}

export const listThreadsInput = z.object({
  cursor: z.string().max(200).optional(),
  q: z.string().trim().max(200).optional(),
  archived: z.boolean().default(false),
  // "none": general chats only; a project's id: that project's; absent: all.
  project: z.string().trim().max(64).optional(),
  limit: z.number().int().min(1).max(100).default(30),
});

/** A page of the user's threads, newest activity first (keyset pagination). */
export async function listThreads(u: UserContext, input: z.input<typeof listThreadsInput>) {
  const { db, userId } = u;
  const { cursor, q, archived, limit, project } = listThreadsInput.parse(input);
  const c = u.cipher;
  let after: { at: Date; id: string } | undefined;
  if (cursor) {
    const [at, id] = cursor.split("|");
    if (at && id && !Number.isNaN(Date.parse(at))) after = { at: new Date(at), id };
  }
  const rows = await db.thread.findMany({
    where: {
      userId,
      archived,
      temporary: false,
      ...(project ? { projectId: project === "none" ? null : project } : {}),
      // A shared project's chats, read as a member: another member's private chat is not listed.
      ...(u.actorId !== userId ? { AND: [{ OR: [{ private: false }, { authorId: u.actorId }] }] } : {}),
      // Encrypted titles are searched after decryption, below.
      ...(q && !c.enabled ? { title: { contains: q, mode: "insensitive" as const } } : {}),
      ...(after
        ? { OR: [{ lastActivityAt: { lt: after.at } }, { lastActivityAt: after.at, id: { lt: after.id } }] }
        : {}),
    },
    orderBy: [{ lastActivityAt: "desc" }, { id: "desc" }],
    take: q && c.enabled ? 5000 : limit + 1,
    select: {
      id: true,
      title: true,
      lastActivityAt: true,
      archived: true,
      projectId: true,
      authorId: true,
      apiKey: { select: { name: true } },
    },
  });
  const opened = rows.map(({ apiKey, ...t }) => ({
    ...t,
    title: t.title === null ? null : c.open(t.title),
    via: apiKey ? c.open(apiKey.name) : null,
  }));
  const matching =
    q && c.enabled
      ? opened.filter((t) => t.title?.toLowerCase().includes(q.toLowerCase())).slice(0, limit + 1)
      : opened;
  const page = matching.slice(0, limit);
  const last = page.at(-1);
  return {
    threads: page.map((t) => ({ ...t, lastActivityAt: t.lastActivityAt.toISOString() })) as ThreadSummary[],
    nextCursor: matching.length > limit && last ? `${last.lastActivityAt.toISOString()}|${last.id}` : null,
  };
}

async function updateOwned(db: Db, userId: string, threadId: string, data: { title?: string; archived?: boolean }) {
  const r = await db.thread.updateMany({ where: { id: threadId, userId }, data });
  if (r.count === 0) throw new NotFoundError("thread");
}

export const renameThread = async (u: UserContext, threadId: string, title: string) =>
  updateOwned(u.db, u.userId, threadId, { title: u.cipher.seal(titleSchema.parse(title)) });
export const setArchived = (db: Db, userId: string, threadId: string, archived: boolean) =>
  updateOwned(db, userId, threadId, { archived });

export async function deleteThread(db: Db, userId: string, threadId: string) {
  const r = await db.thread.deleteMany({ where: { id: threadId, userId } });
  if (r.count === 0) throw new NotFoundError("thread");
}

export type ViewItem = SessionItem & {
  siblingIds: string[];
  /** A message's files; an answer's document passages (file and page). */
  attachments: AttachmentMeta[];
  sources: SourceView[];
  memoriesUsed: MemoryShown[];
  alsoGiven: MemoryShown[];
  feedback: AnswerFeedback | null;
};
export type ThreadView = {
  thread: {
    id: string;
    title: string | null;
    temporary: boolean;
    archived: boolean;
    /** Made through /v1 with this key (its name), or null. */
    via: string | null;
    /** Its project, or null for a general chat. */
    project: { id: string; name: string; model: string | null } | null;
    /** Imported conversations: the app it came from and when it started there. */
    imported: { source: string; startedAt: string } | null;
    /** The model picked for it (null: its project's, else the default). */
    model: string | null;
    /** In a shared project: who started it, whether the viewer may continue it (its author alone), and whether it
     * is kept to its author. */
    shared: { author: string; mayContinue: boolean; private: boolean } | null;
  };
  items: ViewItem[];
  totals: { promptTokens: number; completionTokens: number };
  truncated: boolean;
  /** The newest rolling summary on this branch (what the model gets in place of the turns before it), or null. */
  summary: { content: string; throughItemId: string; createdAt: string } | null;
};

const VIEW_LIMIT = 500;

/** How a member is named to the others: their name, else their email; "a former member" once they are gone. */
export async function personName(db: Db, userId: string | null): Promise<string> {
  const p = userId ? await db.user.findUnique({ where: { id: userId }, select: { name: true, email: true } }) : null;
  return p ? (p.name ?? p.email) : "a former member";
}

const USE_SELECT = { itemId: true, used: true, memory: { select: { id: true, text: true } } } as const;

/** In a shared project, the member's own memories these answers were given (theirs alone: read with their key). */
async function ownUses(u: UserContext, answerIds: string[]) {
  const actor = answerIds.length ? await actorContext(u) : null;
  if (!actor) return null;
  const uses = await u.db.memoryUse.findMany({
    where: { userId: actor.userId, itemId: { in: answerIds } },
    select: USE_SELECT,
  });
  return { uses, cipher: actor.cipher };
}

/** The active branch with, for each message, its siblings (for "‹ 1/2 ›"). */
export async function threadView(
  u: UserContext,
  threadId: string,
  access?: Pick<ThreadAccess, "role" | "mayContinue" | "authorId">,
): Promise<ThreadView> {
  const { db, userId } = u;
  const t = await ownedThread(db, userId, threadId);
  const shared = access?.role
    ? { author: await personName(db, access.authorId), mayContinue: access.mayContinue, private: t.private }
    : null;
  // An answer whose writer went away shows as interrupted at once, not after the next periodic sweep.
  await sweepExpiredAnswers(db, threadId);
  const items = await pathItems(db, threadId, t.activeLeafId, VIEW_LIMIT + 1, u.cipher);
  const truncated = items.length > VIEW_LIMIT;
  const shown = truncated ? items.slice(1) : items;
  const parentIds = [...new Set(shown.map((i) => i.parentId).filter((p): p is string => !!p))];
  const answerIds = shown.filter((i) => i.role === "assistant").map((i) => i.id);
  const [siblings, totals, uses, ratings, summary, files, mine] = await Promise.all([
    db.item.findMany({
      where: { threadId, OR: [{ parentId: { in: parentIds } }, { parentId: null }] },
      select: { id: true, parentId: true },
      orderBy: { position: "asc" },
    }),
    db.item.aggregate({ where: { threadId }, _sum: { promptTokens: true, completionTokens: true } }),
    db.memoryUse.findMany({ where: { userId, itemId: { in: answerIds } }, select: USE_SELECT }),
    feedbackFor(u, answerIds),
    db.summary.findFirst({
      where: { threadId, throughItemId: { in: shown.map((i) => i.id) } },
      orderBy: { version: "desc" },
      select: { content: true, throughItemId: true, createdAt: true },
    }),
    attachmentsInView(db, u.cipher, threadId, answerIds),
    ownUses(u, answerIds),
  ]);
  // Per answer: the memories it drew on, and the others it was given (with, for a member, their own).
  const usedBy = new Map<string, MemoryShown[]>();
  const givenTo = new Map<string, MemoryShown[]>();
  const c = u.cipher;
  const add = (row: (typeof uses)[number], shown: MemoryShown) => {
    const into = row.used ? usedBy : givenTo;
    into.set(row.itemId, [...(into.get(row.itemId) ?? []), shown]);
  };
  for (const row of uses) add(row, { id: row.memory.id, text: c.open(row.memory.text) });
  for (const row of mine?.uses ?? [])
    add(row, { id: row.memory.id, text: mine!.cipher.open(row.memory.text), mine: true });
  const byParent = new Map<string | null, string[]>();
  for (const s of siblings) byParent.set(s.parentId, [...(byParent.get(s.parentId) ?? []), s.id]);
  return {
    thread: {
      id: t.id,
      title: t.title === null ? null : c.open(t.title),
      temporary: t.temporary,
      archived: t.archived,
      project: t.project ? { id: t.project.id, name: c.open(t.project.name), model: t.project.model } : null,
      via: t.apiKey ? c.open(t.apiKey.name) : null,
      imported: t.importSource ? { source: t.importSource, startedAt: t.createdAt.toISOString() } : null,
      model: t.model,
      shared,
    },
    items: shown.map((i) => ({
      ...i,
      siblingIds: byParent.get(i.parentId) ?? [i.id],
      attachments: files.byItem.get(i.id) ?? [],
      sources: files.sources.get(i.id) ?? [],
      memoriesUsed: usedBy.get(i.id) ?? [],
      alsoGiven: givenTo.get(i.id) ?? [],
      feedback: ratings.get(i.id) ?? null,
    })),
    totals: { promptTokens: totals._sum.promptTokens ?? 0, completionTokens: totals._sum.completionTokens ?? 0 },
    truncated,
    summary: summary && {
      content: c.open(summary.content),
      throughItemId: summary.throughItemId,
      createdAt: summary.createdAt.toISOString(),
    },
  };
}

/** Makes the branch through `itemId` active, down to its newest leaf. */
export async function switchBranch(db: Db, userId: string, threadId: string, itemId: string) {
  await ownedThread(db, userId, threadId);
  const [leaf] = await db.$queryRaw<{ id: string }[]>`
    WITH RECURSIVE d AS (
       SELECT id, position FROM "Item" WHERE id = ${itemId} AND "threadId" = ${threadId}
       UNION ALL
       SELECT c.id, c.position FROM "Item" c JOIN d ON c."parentId" = d.id
     ) SELECT id FROM d ORDER BY position DESC LIMIT 1
  `;
  if (!leaf) throw new NotFoundError("thread");
  await db.thread.update({ where: { id: threadId }, data: { activeLeafId: leaf.id } });
}

/**
 * Undo the last turn: pops the answer (and any tool items), then the question. What Mnemo learned from that turn
 * alone is withdrawn with it (lib/memory/writes.ts), and learning still under way for it keeps nothing. Returns how
 * many messages went and how many memories.
 */
export async function undoLastTurn(u: UserContext, threadId: string): Promise<{ popped: number; withdrawn: number }> {
  const session = await openSession(u, threadId);
  const popped: string[] = [];
  for (;;) {
    const it = await session.popItem();
    if (!it) break;
    popped.push(it.id);
    if (it.role === "user") break;
  }
  return { popped: popped.length, withdrawn: await withdrawLearnedFrom(u, popped) };
}

export async function clearThread(u: UserContext, threadId: string) {
  const session = await openSession(u, threadId);
  await session.clearSession();
}

/** The model a thread answers with from now on (null: its project's, else the default). */
export async function setThreadModel(db: Db, userId: string, threadId: string, model: string | null) {
  const picked = await offeredModel(db, model);
  const r = await db.thread.updateMany({ where: { id: threadId, userId }, data: { model: picked } });
  if (!r.count) throw new NotFoundError("thread");
}
