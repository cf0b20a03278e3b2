"use server";
// Memory dashboard actions, through userAction (lib/http/action.ts): checked,
// validated, and scoped to the signed-in user's memories (another user's memory
// id is "not found"). Each refreshes the dashboard.
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { userAction, type UserActionContext } from "@/lib/http/action";
import { reviewPending } from "@/lib/memory/writes";
import { embedSoon } from "@/lib/memory/embed";
import { memoryKindSchema, memoryHistory } from "@/lib/memory/long-term";
import {
  addMemory,
  archiveByUser,
  deleteMemories,
  restoreByUser,
  forgetEverything,
  setMuted,
  setPrivate,
  setPinned,
  updateMemoryText,
} from "@/lib/memory/store";
import { settleConflict, settleInput } from "@/lib/memory/conflicts";
import { verifyProcedure } from "@/lib/memory/procedures";
import { consolidateNow, consolidateSoon } from "@/lib/memory/consolidate";
import { aboutTextSchema, releaseAbout, saveAbout } from "@/lib/memory/about";

const id = z.string().trim().min(1).max(64);

/** A dashboard action: the memory page shows the change at once. */
function memoryAction<A extends z.ZodTuple<readonly z.ZodType[], null>, T>(
  args: A,
  fn: (input: z.output<A>, ctx: UserActionContext) => Promise<T>,
) {
  return userAction(args, async (input, ctx) => {
    const data = await fn(input, ctx);
    revalidatePath("/settings/memory");
    return data;
  });
}

export const editMemoryAction = memoryAction(z.tuple([id, z.string()]), async ([memoryId, text], ctx) => {
  await updateMemoryText(ctx, memoryId, text, {
    actor: "user",
    source: "manual",
    reason: "Edited on the memory dashboard",
  });
  await embedSoon(ctx.db, ctx.userId);
});

export const addMemoryAction = memoryAction(z.tuple([z.string(), memoryKindSchema]), async ([text, kind], ctx) => {
  await addMemory(ctx, { text, kind, source: "manual" }, "user", "Added on the memory dashboard");
  await embedSoon(ctx.db, ctx.userId);
  await consolidateSoon(ctx.db, ctx.userId);
});

/** "Tidy up now": merge duplicates and look for contradictions in the background. */
export const consolidateNowAction = memoryAction(z.tuple([]), (_, { db, user }) => consolidateNow(db, user.id));

/** The user's answer to a conflict: keep this memory, the other one, or both. */
export const settleConflictAction = memoryAction(z.tuple([settleInput]), ([input], { db, user }) =>
  settleConflict(db, user.id, input),
);

/** "Still right": the user re-validates a procedure that was marked for it. */
export const verifyProcedureAction = memoryAction(
  z.tuple([id]),
  async ([memoryId], { db, user }) => void (await verifyProcedure(db, user.id, memoryId)),
);

/** "Don't mention this": kept, never sent to a model; or mentionable again. */
export const muteMemoryAction = memoryAction(
  z.tuple([id, z.boolean()]),
  async ([memoryId, muted], ctx) => void (await setMuted(ctx, memoryId, muted)),
);

export const privateMemoryAction = memoryAction(
  z.tuple([id, z.boolean()]),
  async ([memoryId, isPrivate], ctx) => void (await setPrivate(ctx, memoryId, isPrivate)),
);

export const pinMemoryAction = memoryAction(
  z.tuple([id, z.boolean()]),
  async ([memoryId, pinned], ctx) => void (await setPinned(ctx, memoryId, pinned)),
);

/** Approves or rejects a memory waiting for review; a proposal is carried out on its target. */
export const reviewMemoryAction = memoryAction(
  z.tuple([id, z.boolean()]),
  async ([memoryId, approve], ctx) => void (await reviewPending(ctx, memoryId, approve)),
);

const ids = z.array(id).min(1).max(500);

/** Back from the archive (a deleted memory's Undo, or Restore in the archived list). */
export const restoreMemoriesAction = memoryAction(z.tuple([ids]), ([memoryIds], ctx) =>
  restoreByUser(ctx, memoryIds, "Restored on the memory dashboard"),
);

/** Delete: into the archive, restorable; returns the ids Undo brings back. */
export const deleteMemoriesAction = memoryAction(z.tuple([ids]), ([memoryIds], ctx) =>
  archiveByUser(ctx, memoryIds, "Deleted on the memory dashboard"),
);

/** Delete for good: only what is already in the archive (deleting from the list archives first). */
export const purgeMemoriesAction = memoryAction(z.tuple([ids]), async ([memoryIds], { db, user }) => {
  const archived = await db.memory.findMany({
    where: { userId: user.id, id: { in: memoryIds }, status: "archived" },
    select: { id: true },
  });
  return deleteMemories(
    db,
    user.id,
    archived.map((m) => m.id),
  );
});

export const memoryHistoryAction = memoryAction(z.tuple([id]), async ([memoryId], ctx) => {
  const rows = await memoryHistory(ctx, memoryId);
  return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
});

const settingsInput = z.object({ paused: z.boolean().optional(), review: z.boolean().optional() });

export const memorySettingsAction = memoryAction(z.tuple([settingsInput]), async ([s], { db, user }) => {
  await db.user.update({ where: { id: user.id }, data: { memoryPaused: s.paused, memoryReview: s.review } });
});

const forgetConfirmation = z
  .string()
  .refine((v) => v.trim().toLowerCase() === "forget me", 'Type "forget me" to confirm.');

export const forgetMeAction = memoryAction(z.tuple([forgetConfirmation]), (_, { db, user }) =>
  forgetEverything(db, user.id),
);

/** "What Mnemo knows about you", in the user's own words (kept until they ask for a new one); empty clears it. */
export const saveAboutAction = memoryAction(z.tuple([aboutTextSchema]), ([text], ctx) => saveAbout(ctx, text));

/** "Write it again from my memories": the model writes it at the next consolidation, queued now. */
export const releaseAboutAction = memoryAction(z.tuple([]), async (_, ctx) => {
  await releaseAbout(ctx);
  await consolidateNow(ctx.db, ctx.userId);
});
