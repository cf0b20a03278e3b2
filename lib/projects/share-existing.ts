// Sharing a project the user already has: its rows (the project, its chats with their messages, summaries and
// files, its memories with their history, ratings and uses) move from the user's account to a new project account
// (lib/projects/access.ts), re-sealed under the project's key, in one transaction: all of it moves, or none. The
// user becomes its owner and the author of its chats; what it learned becomes memories they taught.
import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db/types";
import { AppError } from "@/lib/errors";
import { SEALED_COLUMNS } from "@/lib/crypto/sealed-columns";
import type { ContentCipher } from "@/lib/crypto/content";
import { resealedColumns } from "@/lib/crypto/rotate";
import { userContext, type UserContext } from "@/lib/user-context";
import { newProjectAccount } from "./members";
import { projectAccess } from "./access";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

const threads = (p: string) => Prisma.sql`SELECT id FROM "Thread" WHERE "projectId" = ${p}`;
/** The project's rows in each table that holds some, as SQL predicates. */
const ROWS: Record<string, (p: string) => Prisma.Sql> = {
  Project: (p) => Prisma.sql`id = ${p}`,
  Thread: (p) => Prisma.sql`"projectId" = ${p}`,
  Item: (p) => Prisma.sql`"threadId" IN (${threads(p)})`,
  Summary: (p) => Prisma.sql`"threadId" IN (${threads(p)})`,
  Attachment: (p) => Prisma.sql`"threadId" IN (${threads(p)})`,
  AttachmentPassage: (p) =>
    Prisma.sql`"attachmentId" IN (SELECT id FROM "Attachment" WHERE "threadId" IN (${threads(p)}))`,
  Memory: (p) => Prisma.sql`"projectId" = ${p}`,
  MemoryVersion: (p) => Prisma.sql`"memoryId" IN (SELECT id FROM "Memory" WHERE "projectId" = ${p})`,
  MemoryUse: (p) => Prisma.sql`"memoryId" IN (SELECT id FROM "Memory" WHERE "projectId" = ${p})`,
  Feedback: (p) => Prisma.sql`"threadId" IN (${threads(p)})`,
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
        await reseal(tx, projectId, u.cipher, to.cipher);
        for (const name of Object.keys(ROWS).filter((n) => n !== "Summary"))
          // a summary is its thread's
          await tx.$executeRaw`UPDATE ${table(name)} SET "userId" = ${accountId} WHERE ${ROWS[name](projectId)}`;
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

/** Every sealed column of the project's rows, opened with the user's key and sealed with the project's. */
async function reseal(tx: Tx, projectId: string, from: ContentCipher, to: ContentCipher) {
  if (!from.enabled && !to.enabled) return;
  for (const { table: name, columns } of SEALED_COLUMNS) {
    const where = ROWS[name];
    if (!where) continue;
    const cols = Prisma.join(columns.map((c) => Prisma.raw(`"${c.name}"`)));
    const rows = await tx.$queryRaw<Array<Record<string, unknown>>>`
      SELECT id, ${cols} FROM ${table(name)} WHERE ${where(projectId)}`;
    for (const row of rows) {
      const sets = resealedColumns(row, columns, from, to);
      if (sets.length) await tx.$executeRaw`UPDATE ${table(name)} SET ${Prisma.join(sets)} WHERE id = ${row.id}`;
    }
  }
}
