// A shared project's memories as its members see them: each with who taught it ("learned from Ada's chat, 12 Nov",
// "added by Ben"). Every member reads them; editors and the owner add, forget and review them. The rows are the
// project's (lib/projects/access.ts), so the memory modules do the work with the project's context.
import { z } from "zod";
import { NotFoundError } from "@/lib/errors";
import { addMemory, setMemoryStatus } from "@/lib/memory/store";
import { reviewPending } from "@/lib/memory/writes";
import { listConflicts, settleConflict, settleInput } from "@/lib/memory/conflicts";
import { assertMay, type ProjectAccess } from "./access";

export const projectMemoryText = z
  .string()
  .trim()
  .min(1, "Type what the project should remember.")
  .max(2000, "A memory is at most 2,000 characters.");

export type ProjectMemoryView = {
  id: string;
  text: string;
  kind: string;
  status: "active" | "pending";
  createdAt: string;
  /** "learned": from a member's chat (its author); "added": by a member by hand. */
  origin: "learned" | "added";
  /** The member who taught it (null: a former member). */
  by: string | null;
};

/** The project's current memories and those waiting for review, newest first. */
export async function projectMemories(a: ProjectAccess): Promise<ProjectMemoryView[]> {
  const { db, userId, cipher } = a.content;
  const rows = await db.memory.findMany({
    where: { userId, projectId: a.projectId, status: { in: ["active", "pending"] }, proposalOp: null },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 500,
    select: { id: true, text: true, kind: true, status: true, createdAt: true, addedById: true, sourceThreadId: true },
  });
  const threadIds = [...new Set(rows.map((r) => r.sourceThreadId).filter((t): t is string => !!t))];
  const threads = await db.thread.findMany({
    where: { id: { in: threadIds }, userId },
    select: { id: true, authorId: true },
  });
  const authorOf = new Map(threads.map((t) => [t.id, t.authorId]));
  const people = [...new Set([...rows.map((r) => r.addedById), ...threads.map((t) => t.authorId)])].filter(
    (p): p is string => !!p,
  );
  const names = new Map(
    (await db.user.findMany({ where: { id: { in: people } }, select: { id: true, name: true, email: true } })).map(
      (p) => [p.id, p.name ?? p.email],
    ),
  );
  return rows.map((r) => {
    const learned = !!r.sourceThreadId;
    const person = r.addedById ?? (r.sourceThreadId ? authorOf.get(r.sourceThreadId) : null) ?? null;
    return {
      id: r.id,
      text: cipher.open(r.text),
      kind: r.kind,
      status: r.status as "active" | "pending",
      createdAt: r.createdAt.toISOString(),
      origin: learned ? "learned" : "added",
      by: person ? (names.get(person) ?? null) : null,
    };
  });
}

/** An editor or the owner adds a memory to the project by hand ("added by Ben"). */
export async function addProjectMemory(a: ProjectAccess, text: string) {
  assertMay(a, "write");
  await addMemory(a.content, { text: projectMemoryText.parse(text), source: "manual" }, "user", "Added by a member");
}

async function projectMemory(a: ProjectAccess, id: string) {
  assertMay(a, "write");
  const m = await a.content.db.memory.findFirst({
    where: { id, userId: a.content.userId, projectId: a.projectId },
    select: { id: true },
  });
  if (!m) throw new NotFoundError("memory");
}

/** An editor or the owner forgets one of the project's memories (archived, as on the user's own dashboard). */
export async function forgetProjectMemory(a: ProjectAccess, id: string) {
  await projectMemory(a, id);
  await setMemoryStatus(a.content, id, "archived", "user", "Forgotten by a member");
}

/** An editor or the owner approves or rejects a memory learned while the project holds learning for review. */
export async function reviewProjectMemory(a: ProjectAccess, id: string, approve: boolean) {
  await projectMemory(a, id);
  await reviewPending(a.content, id, approve);
}

/** Whether what the project learns waits for an editor's approval (the project's own setting). */
export async function setProjectReview(a: ProjectAccess, review: boolean) {
  assertMay(a, "own");
  await a.content.db.user.update({ where: { id: a.content.userId }, data: { memoryReview: review } });
}

/** Two of the project's memories that say opposite things (consolidation found them), for an editor to decide. */
export const projectConflicts = (a: ProjectAccess) => listConflicts(a.content);

/** An editor or the owner decides a conflict: keeps one (the other is archived, restorably) or both. */
export async function settleProjectConflict(a: ProjectAccess, input: z.input<typeof settleInput>) {
  assertMay(a, "write");
  await settleConflict(a.content.db, a.content.userId, input);
}
