"use server";
// Thread actions for the chat UI. Each validates its input with zod, checks the
// session, and works only on the signed-in user's threads: another user's
// thread id gets the same "not found" as an id that does not exist.
import { z } from "zod";
import { requireUser } from "@/lib/auth/session";
import { toResult, type Result } from "@/lib/http/action";
import { getDb, type Db } from "@/lib/db/client";
import {
  clearThread,
  deleteThread,
  listThreads,
  listThreadsInput,
  renameThread,
  setArchived,
  switchBranch,
  threadIdSchema,
  threadView,
  undoLastTurn,
  type ThreadView,
  type ThreadSummary,
} from "@/lib/chat/threads";

import { rateAnswer, rateInput, type AnswerFeedback } from "@/lib/memory/feedback";

async function guarded<T>(fn: (userId: string) => Promise<T>): Promise<Result<T>> {
  return toResult("thread action", async () => fn((await requireUser()).id));
}

export async function listThreadsAction(
  input: z.input<typeof listThreadsInput>,
): Promise<Result<{ threads: ThreadSummary[]; nextCursor: string | null }>> {
  return guarded(async (userId) => listThreads(await getDb(), userId, listThreadsInput.parse(input)));
}

export async function loadThreadAction(threadId: string): Promise<Result<ThreadView>> {
  return guarded(async (userId) => threadView(await getDb(), userId, threadIdSchema.parse(threadId)));
}

export async function renameThreadAction(threadId: string, title: string): Promise<Result> {
  return guarded(
    async (userId) =>
      void (await renameThread(await getDb(), userId, threadIdSchema.parse(threadId), z.string().parse(title))),
  );
}

export async function archiveThreadAction(threadId: string, archived: boolean): Promise<Result> {
  return guarded(
    async (userId) =>
      void (await setArchived(await getDb(), userId, threadIdSchema.parse(threadId), z.boolean().parse(archived))),
  );
}

export async function deleteThreadAction(threadId: string): Promise<Result> {
  return guarded(async (userId) => void (await deleteThread(await getDb(), userId, threadIdSchema.parse(threadId))));
}

/** Changes a thread, then returns its new view for the chat to show. */
function changeThread(
  threadId: string,
  change: (db: Db, userId: string, threadId: string) => Promise<unknown>,
): Promise<Result<ThreadView>> {
  return guarded(async (userId) => {
    const db = await getDb();
    const t = threadIdSchema.parse(threadId);
    await change(db, userId, t);
    return threadView(db, userId, t);
  });
}

export async function switchBranchAction(threadId: string, itemId: string): Promise<Result<ThreadView>> {
  return changeThread(threadId, (db, userId, t) => switchBranch(db, userId, t, threadIdSchema.parse(itemId)));
}

export async function undoTurnAction(threadId: string): Promise<Result<ThreadView>> {
  return changeThread(threadId, undoLastTurn);
}

export async function clearThreadAction(threadId: string): Promise<Result<ThreadView>> {
  return changeThread(threadId, clearThread);
}

/** 👍 / 👎 (rating 1 / -1, with an optional comment) on one of the user's answers; null removes the rating. */
export async function rateAnswerAction(input: z.input<typeof rateInput>): Promise<Result<AnswerFeedback>> {
  return guarded(async (userId) => rateAnswer(await getDb(), userId, input));
}
