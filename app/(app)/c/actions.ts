"use server";
// Thread actions for the chat UI, through userAction (lib/http/action.ts): the
// session is checked, the arguments validated, and each works only on the
// signed-in user's threads: another user's thread id gets the same "not found"
// as an id that does not exist.
import { z } from "zod";
import { userAction, type ActionContext } from "@/lib/http/action";
import type { Db } from "@/lib/db/types";
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
} from "@/lib/chat/threads";
import { rateAnswer, rateInput } from "@/lib/memory/feedback";

const thread = z.tuple([threadIdSchema]);

export const listThreadsAction = userAction(z.tuple([listThreadsInput]), ([input], { db, user }) =>
  listThreads(db, user.id, input),
);

export const loadThreadAction = userAction(thread, ([threadId], { db, user }) => threadView(db, user.id, threadId));

export const renameThreadAction = userAction(
  z.tuple([threadIdSchema, z.string()]),
  async ([threadId, title], { db, user }) => void (await renameThread(db, user.id, threadId, title)),
);

export const archiveThreadAction = userAction(
  z.tuple([threadIdSchema, z.boolean()]),
  async ([threadId, archived], { db, user }) => void (await setArchived(db, user.id, threadId, archived)),
);

export const deleteThreadAction = userAction(
  thread,
  async ([threadId], { db, user }) => void (await deleteThread(db, user.id, threadId)),
);

/** Changes a thread, then returns its new view for the chat to show. */
const changeThread =
  (change: (db: Db, userId: string, threadId: string) => Promise<unknown>) =>
  async ([threadId]: z.output<typeof thread>, { db, user }: ActionContext) => {
    await change(db, user.id, threadId);
    return threadView(db, user.id, threadId);
  };

export const switchBranchAction = userAction(
  z.tuple([threadIdSchema, threadIdSchema]),
  async ([threadId, itemId], { db, user }) => {
    await switchBranch(db, user.id, threadId, itemId);
    return threadView(db, user.id, threadId);
  },
);

export const undoTurnAction = userAction(thread, changeThread(undoLastTurn));

export const clearThreadAction = userAction(thread, changeThread(clearThread));

/** 👍 / 👎 (rating 1 / -1, with an optional comment) on one of the user's answers; null removes the rating. */
export const rateAnswerAction = userAction(z.tuple([rateInput]), ([input], { db, user }) =>
  rateAnswer(db, user.id, input),
);
