// Which memories and conversations a thread may draw on. A general chat sees general memory (projectId null); a
// project's thread sees its project's memories and, in the "shared" mode, general memory too; a "project_only"
// project sees its own alone. Nothing a project learned is ever seen outside it, in either mode: the mode only
// says what the project sees. One predicate, the same in Prisma (scopeWhere) and in SQL (the functions'
// scope_project / scope_general arguments): (general AND projectId IS NULL) OR projectId = project.
// The scope also says whether memories marked private ("never sent off this machine") may be read: only when the
// model the reads are for is on a local address (lib/memory/disclosure.ts). Off by default.
import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db/types";

export type ProjectMemoryMode = "shared" | "project_only";

export type MemoryScope = {
  /** The project whose memories and threads are in scope (null: none). */
  readonly projectId: string | null;
  /** Whether general memory (no project) is in scope. */
  readonly general: boolean;
  /** Whether private memories may be read: the model they go to is local. Absent: they may not. */
  readonly privateOk?: boolean;
};

/** A general chat's scope, and the scope of every user-facing list (the dashboard filters on its own). */
export const GENERAL_SCOPE: MemoryScope = { projectId: null, general: true };

/**
 * The scope of a thread in this project (or in none). A shared project's rows see its own memories alone, whatever
 * its mode: in the "shared" mode a member's general memory helps their own turns from their own account
 * (lib/projects/own-memory.ts), never as the project's.
 */
export function projectScope(
  project: { id: string; memoryMode: ProjectMemoryMode; shared?: boolean } | null,
  shared = !!project?.shared,
): MemoryScope {
  if (!project) return GENERAL_SCOPE;
  return { projectId: project.id, general: !shared && project.memoryMode === "shared" };
}

/** Exactly one place's memories (a project's, or general memory): consolidation never mixes two. */
export const exactScope = (projectId: string | null): MemoryScope =>
  projectId ? { projectId, general: false } : GENERAL_SCOPE;

/** The scope as a Prisma filter on Memory or Thread rows. */
export function scopeWhere(s: MemoryScope): { OR: Array<{ projectId: string | null }> } {
  const or: Array<{ projectId: string | null }> = [];
  if (s.general) or.push({ projectId: null });
  if (s.projectId) or.push({ projectId: s.projectId });
  return { OR: or };
}

/** The scope as a raw-query predicate on a table's "projectId" (alias it by passing `column`). */
export function scopeSql(s: MemoryScope, column = Prisma.sql`"projectId"`): Prisma.Sql {
  return Prisma.sql`((${s.general}::boolean AND ${column} IS NULL) OR ${column} = ${s.projectId}::text)`;
}

/** The two arguments the SQL functions over threads take for the scope. */
export const scopeParams = (s: MemoryScope): [string | null, boolean] => [s.projectId, s.general];

/** The three arguments the SQL functions over memories take: the scope, and whether private memories may come. */
export const memoryScopeParams = (s: MemoryScope): [string | null, boolean, boolean] => [
  s.projectId,
  s.general,
  !!s.privateOk,
];

/** The scope as a Prisma filter on Memory rows (private ones left out unless they may be read). */
export const memoryScopeWhere = (s: MemoryScope) => ({ ...scopeWhere(s), ...(s.privateOk ? {} : { private: false }) });

/** The same as a raw-query predicate on "Memory". */
export const memoryScopeSql = (scope: MemoryScope) =>
  Prisma.sql`(${scopeSql(scope)} AND (${!!scope.privateOk}::boolean OR NOT "private"))`;

/** Whether a memory (or thread) in `projectId` is in the scope. */
export const inScope = (s: MemoryScope, projectId: string | null) =>
  projectId === null ? s.general : projectId === s.projectId;

/** The scope of the user's thread, from its project (general for a thread not theirs: it reaches nothing anyway). */
export async function threadScope(db: Db, userId: string, threadId: string): Promise<MemoryScope> {
  const t = await db.thread.findFirst({
    where: { id: threadId, userId },
    select: { project: { select: { id: true, memoryMode: true, shared: true } } },
  });
  return projectScope(t?.project ?? null);
}
