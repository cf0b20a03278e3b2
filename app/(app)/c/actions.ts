"use server";
// Thread actions for the chat UI, through userAction (lib/http/action.ts): the
// session is checked, the arguments validated, and each works only on the
// signed-in user's threads: another user's thread id gets the same "not found"
// as an id that does not exist.
import { z } from "zod";
import { searchMessages, searchMessagesInput } from "@/lib/chat/search";
import { userAction, type UserActionContext } from "@/lib/http/action";
import type { UserContext } from "@/lib/user-context";
import {
  clearThread,
  deleteThread,
  listThreads,
  listThreadsInput,
  renameThread,
  setArchived,
  setThreadModel,
  switchBranch,
  threadIdSchema,
  threadView,
  undoLastTurn,
} from "@/lib/chat/threads";
import { rateAnswer, rateInput } from "@/lib/memory/feedback";

const thread = z.tuple([threadIdSchema]);

export const listThreadsAction = userAction(z.tuple([listThreadsInput]), ([input], ctx) => listThreads(ctx, input));

export const loadThreadAction = userAction(thread, ([threadId], ctx) => threadView(ctx, threadId));

export const renameThreadAction = userAction(
  z.tuple([threadIdSchema, z.string()]),
  async ([threadId, title], ctx) => void (await renameThread(ctx, threadId, title)),
);

export const archiveThreadAction = userAction(
  z.tuple([threadIdSchema, z.boolean()]),
  async ([threadId, archived], { db, user }) => void (await setArchived(db, user.id, threadId, archived)),
);

/** The model the thread answers with from now on (null: its project's, else the default). */
export const setThreadModelAction = userAction(
  z.tuple([threadIdSchema, z.string().trim().min(1).max(200).nullable()]),
  async ([threadId, model], { db, user }) => void (await setThreadModel(db, user.id, threadId, model)),
);

export const deleteThreadAction = userAction(
  thread,
  async ([threadId], { db, user }) => void (await deleteThread(db, user.id, threadId)),
);

/** Changes a thread, then returns its new view for the chat to show. */
const changeThread =
  (change: (u: UserContext, threadId: string) => Promise<unknown>) =>
  async ([threadId]: z.output<typeof thread>, ctx: UserActionContext) => {
    await change(ctx, threadId);
    return threadView(ctx, threadId);
  };

export const switchBranchAction = userAction(
  z.tuple([threadIdSchema, threadIdSchema]),
  async ([threadId, itemId], ctx) => {
    await switchBranch(ctx.db, ctx.userId, threadId, itemId);
    return threadView(ctx, threadId);
  },
);

/** The thread after the undo, and how many memories learned from that turn were withdrawn with it. */
export const undoTurnAction = userAction(thread, async ([threadId], ctx) => {
  const { withdrawn } = await undoLastTurn(ctx, threadId);
  return { view: await threadView(ctx, threadId), withdrawn };
});

export const clearThreadAction = userAction(thread, changeThread(clearThread));

/** 👍 / 👎 (rating 1 / -1, with an optional comment) on one of the user's answers; null removes the rating. */
export const rateAnswerAction = userAction(z.tuple([rateInput]), ([input], ctx) => rateAnswer(ctx, input));

/** The sidebar's search by content: the user's messages matching every word, newest first. */
export const searchMessagesAction = userAction(z.tuple([searchMessagesInput]), ([input], ctx) =>
  searchMessages(ctx, input),
);
