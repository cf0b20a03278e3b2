// Projects as the user sees them: a name, instructions sent with every answer in the project, its threads and its
// memories, and a memory mode (lib/projects/scope.ts). Every function takes the user's context and touches only
// their rows; another user's project looks exactly like one that does not exist. Names and instructions are the
// user's words: sealed with encryption at rest (lib/crypto/sealed-columns.ts).
import { offeredModel } from "@/lib/llm/connection";
import { z } from "zod";
import { NotFoundError } from "@/lib/errors";
import { forgetCachedKeys } from "@/lib/crypto/content";
import { cleanText } from "@/lib/text/policy";
import type { UserContext } from "@/lib/user-context";
import type { Db } from "@/lib/db/types";
import type { ProjectMemoryMode } from "./scope";
import { assertMay, projectAccess, type ProjectRole } from "./access";

export const projectIdSchema = z.string().trim().min(1).max(64);
const nameSchema = z
  .string()
  .transform(cleanText)
  .pipe(z.string().trim().min(1, "A project needs a name.").max(80, "A project name is at most 80 characters."));
const instructionsSchema = z
  .string()
  .transform(cleanText)
  .pipe(z.string().trim().max(4000, "Instructions are at most 4,000 characters."));
const modeSchema = z.enum(["shared", "project_only"]);

const modelSchema = z.string().trim().max(200).nullable();
export const projectInput = z.object({
  name: nameSchema,
  instructions: instructionsSchema.default(""),
  memoryMode: modeSchema.default("shared"),
  /** The model its new threads answer with (null: the default). */
  model: modelSchema.default(null),
});
export const projectChanges = z.object({
  id: projectIdSchema,
  name: nameSchema.optional(),
  instructions: instructionsSchema.optional(),
  memoryMode: modeSchema.optional(),
  model: modelSchema.optional(),
});

export type ProjectSummary = {
  id: string;
  name: string;
  instructions: string;
  memoryMode: ProjectMemoryMode;
  /** The model its new threads answer with (null: the default). */
  model: string | null;
  threads: number;
  memories: number;
  createdAt: string;
  /** Shared with other people (lib/projects/access.ts), and the user's role in it ("owner" for their own). */
  shared: boolean;
  role: ProjectRole;
};

type ProjectRow = {
  id: string;
  name: string;
  instructions: string;
  memoryMode: ProjectMemoryMode;
  model: string | null;
  shared: boolean;
  createdAt: Date;
  _count: { threads: number; memories: number };
};
const summary = (u: UserContext, p: ProjectRow, role: ProjectRole): ProjectSummary => ({
  id: p.id,
  name: u.cipher.open(p.name),
  instructions: u.cipher.open(p.instructions),
  memoryMode: p.memoryMode,
  model: p.model,
  threads: p._count.threads,
  memories: p._count.memories,
  createdAt: p.createdAt.toISOString(),
  shared: p.shared,
  role,
});
const counts = { _count: { select: { threads: { where: { temporary: false } }, memories: true } } } as const;

/**
 * The user's own projects, oldest first (a stable order), with how many threads and memories each has. Shared
 * projects are not among them: their rows are the project's (`listAllProjects` adds them for the sidebar).
 */
export async function listProjects(u: UserContext): Promise<ProjectSummary[]> {
  const rows = await u.db.project.findMany({
    where: { userId: u.userId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    include: counts,
  });
  return rows.map((p) => summary(u, p, "owner"));
}

/** The user's own projects and then the shared projects they belong to, each read with its own key. */
export async function listAllProjects(u: UserContext): Promise<ProjectSummary[]> {
  const [own, memberships] = await Promise.all([
    listProjects(u),
    u.db.projectMember.findMany({
      where: { userId: u.actorId, project: { shared: true } },
      select: { projectId: true },
      orderBy: { joinedAt: "asc" },
    }),
  ]);
  const shared = await Promise.all(memberships.map((m) => getProject(u, m.projectId).catch(() => null)));
  return [...own, ...shared.filter((p): p is ProjectSummary => !!p)];
}

export async function ownedProject(db: Db, userId: string, id: string) {
  const p = await db.project.findFirst({ where: { id, userId } });
  if (!p) throw new NotFoundError("project");
  return p;
}

/** One project the user may read (their own, or a shared one they belong to), read with its key. */
export async function getProject(u: UserContext, id: string): Promise<ProjectSummary> {
  const a = await projectAccess(u, id, "read");
  const p = await a.content.db.project.findUnique({ where: { id: a.projectId }, include: counts });
  if (!p) throw new NotFoundError("project");
  return summary(a.content, p, a.role);
}

export async function createProject(u: UserContext, input: z.input<typeof projectInput>) {
  const f = projectInput.parse(input);
  const c = u.cipher;
  return u.db.project.create({
    data: {
      userId: u.userId,
      name: c.seal(f.name),
      instructions: c.seal(f.instructions),
      memoryMode: f.memoryMode,
      model: await offeredModel(u.db, f.model),
    },
    select: { id: true },
  });
}

export async function updateProject(given: UserContext, input: z.input<typeof projectChanges>) {
  const f = projectChanges.parse(input);
  const a = await projectAccess(given, f.id, "write");
  const u = a.content;
  // In a shared project the mode says whether each member's own memories help their own answers, which the others
  // read: the owner's choice (lib/projects/own-memory.ts).
  if (a.shared && f.memoryMode) assertMay(a, "own");
  const c = u.cipher;
  const r = await u.db.project.updateMany({
    where: { id: f.id, userId: u.userId },
    data: {
      ...(f.name !== undefined ? { name: c.seal(f.name) } : {}),
      ...(f.instructions !== undefined ? { instructions: c.seal(f.instructions) } : {}),
      ...(f.memoryMode ? { memoryMode: f.memoryMode } : {}),
      ...(f.model !== undefined ? { model: await offeredModel(u.db, f.model) } : {}),
    },
  });
  if (!r.count) throw new NotFoundError("project");
}

/**
 * Deletes the project with its threads and its memories (the user is told how many first). A shared one only by
 * its owner, with its account and key (lib/projects/members.ts).
 */
export async function deleteProject(u: UserContext, id: string) {
  const a = await projectAccess(u, id, "own");
  // A shared project's account holds it: deleting the account takes the project, its rows and its key together.
  const r = a.shared
    ? await u.db.user.deleteMany({ where: { id: a.content.userId, kind: "project" } })
    : await u.db.project.deleteMany({ where: { id, userId: u.userId } });
  if (!r.count) throw new NotFoundError("project");
  if (a.shared) forgetCachedKeys(a.content.userId); // its key gone from this process too
}

/**
 * Moves a thread into a project (or out: null). Its messages then count as the project's conversation for recall;
 * memories already learned from it stay where they are (move them on the memory page).
 */
export async function moveThread(u: UserContext, threadId: string, projectId: string | null) {
  if (projectId) await ownedProject(u.db, u.userId, projectId);
  const r = await u.db.thread
    .updateMany({ where: { id: threadId, userId: u.userId }, data: { projectId } })
    .catch(projectGone);
  if (!r.count) throw new NotFoundError("thread");
}

/** A project deleted between the ownership check and the write: the write's foreign key refuses it. */
export function projectGone(e: unknown): never {
  const code = (e as { code?: string })?.code;
  if (code === "P2003" || /foreign key/i.test(String((e as Error)?.message ?? ""))) throw new NotFoundError("project");
  throw e;
}

/** Moves a memory into a project (or into general memory: null), with a version saying so. */
export async function moveMemory(u: UserContext, memoryId: string, projectId: string | null) {
  const { db, userId } = u;
  const [m] = await Promise.all([
    db.memory.findFirst({ where: { id: memoryId, userId }, select: { projectId: true } }),
    projectId ? ownedProject(db, userId, projectId) : Promise.resolve(null),
  ]);
  if (!m) throw new NotFoundError("memory");
  if (m.projectId === projectId) return;
  // Project names are user text and version reasons are not sealed: the reason says where by kind only.
  const reason = !projectId
    ? "Moved out of its project into general memory"
    : m.projectId
      ? "Moved into another project"
      : "Moved from general memory into a project";
  // One write: the move, its version and the end of any conflict it was in land together or not at all.
  await db
    .$transaction([
      db.memory.update({
        where: { id: memoryId },
        data: {
          projectId,
          // A conflict is between memories of one place: moving one away ends it.
          conflictWithId: null,
          versions: {
            create: { userId, oldText: null, newText: null, actor: "user", reason },
          },
        },
      }),
      db.memory.updateMany({ where: { userId, conflictWithId: memoryId }, data: { conflictWithId: null } }),
    ])
    .catch(projectGone);
}
