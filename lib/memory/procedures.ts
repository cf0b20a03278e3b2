// Procedures: how the user wants a kind of task done. A procedure memory's text
// is the task with its steps ("Deploying the blog: 1. … 2. …"); `steps` keeps
// them as a list. It is verified when an answer that used it is rated good,
// and needs re-validation when such an answer is rated bad or it has not been
// verified for MNEMO_PROCEDURE_REVALIDATE_DAYS. A procedure that needs
// re-validation still goes into the prompt, with a caveat telling the model to
// confirm it with the user first: dropping it would lose the user's own
// instructions, following it blindly could repeat what went wrong.
import { NotFoundError } from "@/lib/errors";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { changeWhere } from "./sweeps";
// long-term.ts imports this module too; the class is only used inside functions, after both have loaded.

export const stepsSchema = z.array(z.string().trim().min(1).max(200)).min(1).max(12);

/** The memory text of a procedure: its task, then its numbered steps. */
export function procedureText(task: string, steps: string[] | undefined): string {
  const head = task.trim().replace(/[:.]\s*$/, "");
  if (!steps?.length) return head;
  return `${head}: ${steps.map((s, i) => `${i + 1}. ${s.trim().replace(/[;.]\s*$/, "")}`).join("; ")}`.slice(0, 500);
}

/** The steps written in a procedure's text ("…: 1. a; 2. b"), so a hand edit keeps the list in step. */
export function parseSteps(text: string): string[] | null {
  const parts = text
    .split(/(?:^|[;:\n]\s*)\d{1,2}[.)]\s+/)
    .slice(1)
    .map((s) => s.trim().replace(/[;.]\s*$/, ""))
    .filter(Boolean);
  return parts.length >= 2 ? parts : null;
}

/**
 * After a rating: procedures the answer used are verified (👍) or marked for re-validation (👎), each with a version.
 * One deleted or archived since the answer is left alone (the rating itself is already saved). Returns how many.
 */
export async function onAnswerRated(db: Db, userId: string, itemId: string, rating: 1 | -1): Promise<number> {
  const used = await db.memoryUse.findMany({
    where: { itemId, userId, used: true, memory: { kind: "procedure", status: "active" } },
    select: { memoryId: true },
  });
  if (!used.length) return 0;
  const where = {
    id: { in: used.map((u) => u.memoryId) },
    userId,
    kind: "procedure" as const,
    status: "active" as const,
  };
  return rating === 1
    ? changeWhere(
        db,
        where,
        { verifiedAt: new Date(), needsRevalidation: false },
        "Verified: an answer that followed it was rated good",
        "user",
      )
    : changeWhere(
        db,
        where,
        { needsRevalidation: true },
        "Needs re-validation: an answer that followed it was rated bad",
        "user",
      );
}

/** Procedures not verified (nor created) within `days` are marked for re-validation. Returns how many. */
export async function markStaleProcedures(db: Db, days: number, userId?: string): Promise<number> {
  if (days <= 0) return 0;
  const cutoff = new Date(Date.now() - days * 86_400_000);
  return changeWhere(
    db,
    {
      ...(userId ? { userId } : {}),
      kind: "procedure",
      status: "active",
      needsRevalidation: false,
      // Not verified (or, never verified, not created) since the cutoff: verifying it during the sweep spares it.
      OR: [{ verifiedAt: { lt: cutoff } }, { verifiedAt: null, createdAt: { lt: cutoff } }],
    },
    { needsRevalidation: true },
    `Needs re-validation: not verified for ${days} days`,
  );
}

/** The user confirms a procedure is still right. */
export async function verifyProcedure(db: Db, userId: string, memoryId: string): Promise<void> {
  const m = await db.memory.findFirst({
    where: { id: memoryId, userId, kind: "procedure" },
    select: { id: true, text: true },
  });
  if (!m) throw new NotFoundError("memory");
  await db.memory.update({
    where: { id: m.id },
    data: {
      verifiedAt: new Date(),
      needsRevalidation: false,
      versions: {
        create: {
          userId,
          oldText: m.text,
          newText: m.text,
          actor: "user",
          reason: "Confirmed as still right on the memory dashboard",
        },
      },
    },
  });
}
