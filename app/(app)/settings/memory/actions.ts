"use server";
// Memory dashboard actions: zod-checked, session-checked, and scoped to the
// signed-in user's memories (another user's memory id is "not found").
import { reviewPending } from "@/lib/memory/writes";
import { embedSoon } from "@/lib/memory/embed";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { requireUser } from "@/lib/auth/session";
import { toResult, type Result } from "@/lib/http/action";
import { getDb } from "@/lib/db/client";
import {
  addMemory,
  deleteMemories,
  forgetEverything,
  memoryKindSchema,
  memoryHistory,
  setMemoryStatus,
  setPinned,
  updateMemoryText,
} from "@/lib/memory/long-term";
import { settleConflict, settleInput } from "@/lib/memory/conflicts";
import { verifyProcedure } from "@/lib/memory/procedures";
import { consolidateNow, consolidateSoon } from "@/lib/memory/consolidate";

const id = z.string().trim().min(1).max(64);

async function run<T>(fn: (userId: string) => Promise<T>): Promise<Result<T>> {
  return toResult("memory action", async () => {
    const data = await fn((await requireUser()).id);
    revalidatePath("/settings/memory");
    return data;
  });
}

export async function editMemoryAction(memoryId: string, text: string) {
  return run(async (userId) => {
    const db = await getDb();
    await updateMemoryText(db, userId, id.parse(memoryId), z.string().parse(text), {
      actor: "user",
      source: "manual",
      reason: "Edited on the memory dashboard",
    });
    await embedSoon(db, userId);
  });
}

export async function addMemoryAction(text: string, kind: string) {
  return run(async (userId) => {
    const db = await getDb();
    await addMemory(
      db,
      userId,
      { text: z.string().parse(text), kind: memoryKindSchema.parse(kind), source: "manual" },
      "user",
      "Added on the memory dashboard",
    );
    await embedSoon(db, userId);
    await consolidateSoon(db, userId);
  });
}

/** "Tidy up now": merge duplicates and look for contradictions in the background. */
export async function consolidateNowAction() {
  return run(async (userId) => consolidateNow(await getDb(), userId));
}

/** The user's answer to a conflict: keep this memory, the other one, or both. */
export async function settleConflictAction(input: z.input<typeof settleInput>) {
  return run(async (userId) => settleConflict(await getDb(), userId, input));
}

/** "Still right": the user re-validates a procedure that was marked for it. */
export async function verifyProcedureAction(memoryId: string) {
  return run(async (userId) => void (await verifyProcedure(await getDb(), userId, id.parse(memoryId))));
}

export async function pinMemoryAction(memoryId: string, pinned: boolean) {
  return run(
    async (userId) => void (await setPinned(await getDb(), userId, id.parse(memoryId), z.boolean().parse(pinned))),
  );
}

export async function reviewMemoryAction(memoryId: string, approve: boolean) {
  return run(async (userId) => {
    const db = await getDb();
    await reviewPending(db, userId, id.parse(memoryId), approve); // a proposal is carried out on its target
  });
}

export async function restoreMemoryAction(memoryId: string) {
  return run(
    async (userId) =>
      void (await setMemoryStatus(
        await getDb(),
        userId,
        id.parse(memoryId),
        "active",
        "user",
        "Restored on the memory dashboard",
      )),
  );
}

export async function deleteMemoriesAction(ids: string[]) {
  return run(async (userId) => deleteMemories(await getDb(), userId, z.array(id).min(1).max(500).parse(ids)));
}

export async function memoryHistoryAction(memoryId: string) {
  return run(async (userId) => {
    const db = await getDb();
    const rows = await memoryHistory(db, userId, id.parse(memoryId));
    return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
  });
}

export async function memorySettingsAction(input: { paused?: boolean; review?: boolean }) {
  return run(async (userId) => {
    const s = z.object({ paused: z.boolean().optional(), review: z.boolean().optional() }).parse(input);
    const db = await getDb();
    await db.user.update({ where: { id: userId }, data: { memoryPaused: s.paused, memoryReview: s.review } });
  });
}

export async function forgetMeAction(confirmation: string) {
  return run(async (userId) => {
    if (z.string().parse(confirmation).trim().toLowerCase() !== "forget me")
      throw new z.ZodError([
        { code: "custom", message: 'Type "forget me" to confirm.', path: [], input: confirmation },
      ]);
    return forgetEverything(await getDb(), userId);
  });
}
