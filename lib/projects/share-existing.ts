// Moving the user's own rows into a shared project. Sharing a project the user already has: its rows (the project, its chats with their messages, summaries and
// files, its memories with their history, ratings and uses) move from the user's account to a new project account
// (lib/projects/access.ts), re-sealed under the project's key, in one transaction: all of it moves, or none. The
// user becomes its owner and the author of its chats; what it learned becomes memories they taught. Moving one of
// their chats, or one of their memories, into a shared project they are in: the same for those rows alone.
import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db/types";
import { AppError, NotFoundError } from "@/lib/errors";
import { SEALED_COLUMNS } from "@/lib/crypto/sealed-columns";
import type { ContentCipher } from "@/lib/crypto/content";
import { resealedColumns } from "@/lib/crypto/rotate";
import { userContext, type UserContext } from "@/lib/user-context";
import { newProjectAccount } from "./members";
import { projectAccess } from "./access";
import { moveMemory, moveThread } from "./projects";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

/**
 * What moves, as SQL selecting ids: threads (with their messages, summaries, files, ratings), memories (with their
 * history and uses), and, when a whole project is shared, the project.
 */
type Moving = { threads?: Prisma.Sql; memories?: Prisma.Sql; projectId?: string };
const when = (sel: Prisma.Sql | undefined, sql: (s: Prisma.Sql) => Prisma.Sql) => (sel ? sql(sel) : null);
/** The rows that move in each table that holds some, as SQL predicates (null: none in this move). */
const ROWS: Record<string, (m: Moving) => Prisma.Sql | null> = {
  Project: (m) => (m.projectId ? Prisma.sql`id = ${m.projectId}` : null),
  Thread: (m) => when(m.threads, (t) => Prisma.sql`id IN (${t})`),
  Item: (m) => when(m.threads, (t) => Prisma.sql`"threadId" IN (${t})`),
  Summary: (m) => when(m.threads, (t) => Prisma.sql`"threadId" IN (${t})`),
  Attachment: (m) => when(m.threads, (t) => Prisma.sql`"threadId" IN (${t})`),
  AttachmentPassage: (m) =>
    when(m.threads, (t) => Prisma.sql`"attachmentId" IN (SELECT id FROM "Attachment" WHERE "threadId" IN (${t}))`),
  Feedback: (m) => when(m.threads, (t) => Prisma.sql`"threadId" IN (${t})`),
  Memory: (m) => when(m.memories, (x) => Prisma.sql`id IN (${x})`),
  MemoryVersion: (m) => when(m.memories, (x) => Prisma.sql`"memoryId" IN (${x})`),
  MemoryUse: (m) => when(m.memories, (x) => Prisma.sql`"memoryId" IN (${x})`),
};
const table = (name: string) => Prisma.raw(`"${name}"`);

/** Makes the user's own project a shared one, owned by them. */
export async function shareExistingProject(u: UserContext, projectId: string) {
  const a = await projectAccess(u, projectId, "own");
  if (a.shared) throw new AppError("This project is already shared.", 409);
  const accountId = await newProjectAccount(u.db);
  const to = await userContext(u.db, accountId, undefined, u.actorId);
  try {
    await u.db.$transaction(
      async (tx) => {
        // Still the user's and not shared (a second click, or another tab, finds it moved).
        const left = await tx.project.updateMany({
          where: { id: projectId, userId: u.userId, shared: false },
          data: { shared: true, memoryMode: "project_only" },
        });
        if (!left.count) throw new AppError("This project is already shared.", 409);
        const moving = {
          threads: Prisma.sql`SELECT id FROM "Thread" WHERE "projectId" = ${projectId}`,
          memories: Prisma.sql`SELECT id FROM "Memory" WHERE "projectId" = ${projectId}`,
          projectId,
        };
        await moveRows(tx, moving, u.cipher, to);
        await tx.thread.updateMany({ where: { projectId }, data: { authorId: u.actorId } });
        await tx.memory.updateMany({ where: { projectId, addedById: null }, data: { addedById: u.actorId } });
        await tx.projectMember.create({ data: { projectId, userId: u.actorId, role: "owner" } });
        await tx.projectEvent.create({
          data: { projectId, actorId: u.actorId, subjectId: u.actorId, kind: "joined", role: "owner" },
        });
      },
      { timeout: 300_000, maxWait: 30_000 },
    );
  } catch (e) {
    await u.db.user.deleteMany({ where: { id: accountId, kind: "project" } }).catch(() => undefined);
    throw e;
  }
}

/** Moves one of the user's chats into a project or out (null): into a shared one re-sealed, else by `moveThread`. */
export async function moveChat(u: UserContext, threadId: string, projectId: string | null) {
  if (projectId && (await projectAccess(u, projectId, "write")).shared)
    return moveChatIntoSharedProject(u, threadId, projectId);
  return moveThread(u, threadId, projectId);
}

/**
 * Moves one of the user's own chats into a shared project they may write in: its messages, summaries, files and
 * ratings, re-sealed under the project's key, in one transaction; they become its author, and the project's members
 * read it. What the chat taught them stays in their own memory.
 */
export async function moveChatIntoSharedProject(u: UserContext, threadId: string, projectId: string) {
  const a = await projectAccess(u, projectId, "write");
  if (!a.shared) throw new AppError("That project is not shared.", 409);
  const to = a.content;
  await u.db.$transaction(
    async (tx) => {
      // Still the user's own and not temporary (another tab may have moved or deleted it).
      const left = await tx.thread.updateMany({
        where: { id: threadId, userId: u.userId, temporary: false },
        // Unique per account (a client's conversation, an import): the project's account may hold the same.
        data: { projectId, authorId: u.actorId, private: false, apiKeyId: null, clientRef: null, importRef: null },
      });
      if (!left.count) throw new NotFoundError("thread");
      await moveRows(tx, { threads: Prisma.sql`SELECT ${threadId}::text` }, u.cipher, to);
    },
    { timeout: 300_000, maxWait: 30_000 },
  );
}

/** Moves one of the user's memories into a project or general memory (null): into a shared project re-sealed. */
export async function moveMemoryTo(u: UserContext, memoryId: string, projectId: string | null) {
  if (projectId && (await projectAccess(u, projectId, "write")).shared)
    return moveMemoryIntoSharedProject(u, memoryId, projectId);
  return moveMemory(u, memoryId, projectId);
}

/**
 * Moves one of the user's own memories into a shared project they may write in: re-sealed under its key with its
 * history and uses, in one transaction. It becomes a memory they added there; the chat it came from (theirs, which
 * the members cannot open) is no longer named, and nothing of theirs points at it any more.
 */
export async function moveMemoryIntoSharedProject(u: UserContext, memoryId: string, projectId: string) {
  const a = await projectAccess(u, projectId, "write");
  if (!a.shared) throw new AppError("That project is not shared.", 409);
  const { userId } = u;
  await u.db.$transaction(async (tx) => {
    const moved = await tx.memory.updateMany({
      where: { id: memoryId, userId, status: { in: ["active", "pending"] }, proposalOp: null },
      data: {
        projectId,
        addedById: u.actorId,
        conflictWithId: null,
        supersededById: null,
        sourceThreadId: null,
        sourceItemId: null,
      },
    });
    if (!moved.count) throw new NotFoundError("memory");
    await tx.memory.updateMany({ where: { userId, conflictWithId: memoryId }, data: { conflictWithId: null } });
    await tx.memory.updateMany({ where: { userId, supersededById: memoryId }, data: { supersededById: null } });
    await tx.memory.deleteMany({ where: { userId, proposalForId: memoryId } });
    await tx.memoryVersion.create({
      data: { memoryId, userId, actor: "user", reason: "Moved from the member's own memory into a shared project" },
    });
    await moveRows(tx, { memories: Prisma.sql`SELECT ${memoryId}::text` }, u.cipher, a.content);
  });
}

/** The rows re-sealed under the project's key, then handed to its account (a summary is its thread's). */
async function moveRows(tx: Tx, moving: Moving, from: ContentCipher, to: UserContext) {
  await reseal(tx, moving, from, to.cipher);
  for (const name of Object.keys(ROWS).filter((n) => n !== "Summary")) {
    const where = ROWS[name](moving);
    if (where) await tx.$executeRaw`UPDATE ${table(name)} SET "userId" = ${to.userId} WHERE ${where}`;
  }
}

/** Every sealed column of the moving rows, opened with the user's key and sealed with the project's. */
async function reseal(tx: Tx, moving: Moving, from: ContentCipher, to: ContentCipher) {
  if (!from.enabled && !to.enabled) return;
  for (const { table: name, columns } of SEALED_COLUMNS) {
    const where = ROWS[name]?.(moving);
    if (!where) continue;
    const cols = Prisma.join(columns.map((c) => Prisma.raw(`"${c.name}"`)));
    const rows = await tx.$queryRaw<Array<Record<string, unknown>>>`
      SELECT id, ${cols} FROM ${table(name)} WHERE ${where}`;
    for (const row of rows) {
      const sets = resealedColumns(row, columns, from, to);
      if (sets.length) await tx.$executeRaw`UPDATE ${table(name)} SET ${Prisma.join(sets)} WHERE id = ${row.id}`;
    }
  }
}
