"use server";
// Thread actions for the chat UI, through userAction (lib/http/action.ts): the
// session is checked, the arguments validated, and each works only on the
// signed-in user's threads: another user's thread id gets the same "not found"
// as an id that does not exist. A shared project's chat (lib/projects/access.ts) is read by its members and changed
// by its author alone; archiving and rating stay with the user's own chats.
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
import { answerContext, projectAccess, threadAccess } from "@/lib/projects/access";

const thread = z.tuple([threadIdSchema]);

export const listThreadsAction = userAction(z.tuple([listThreadsInput]), async ([input], ctx) => {
  // A shared project's chats are the project's rows: listed through the member's access (none for anyone else).
  const project = input.project && input.project !== "none" ? input.project : null;
  const shared = project ? await projectAccess(ctx, project, "read").catch(() => null) : null;
  return listThreads(shared?.content ?? ctx, input);
});

/** The thread's view for the user: theirs, or a shared project's they may read. */
async function viewOf(ctx: UserContext, threadId: string) {
  const a = await threadAccess(ctx, threadId, "read");
  return threadView(a.content, threadId, a);
}
/** The context whose rows the thread holds, for a change by someone who may continue it. */
const changer = async (ctx: UserContext, threadId: string) => (await threadAccess(ctx, threadId, "continue")).content;

export const loadThreadAction = userAction(thread, ([threadId], ctx) => viewOf(ctx, threadId));

export const renameThreadAction = userAction(
  z.tuple([threadIdSchema, z.string()]),
  async ([threadId, title], ctx) => void (await renameThread(await changer(ctx, threadId), threadId, title)),
);

export const archiveThreadAction = userAction(
  z.tuple([threadIdSchema, z.boolean()]),
  async ([threadId, archived], { db, user }) => void (await setArchived(db, user.id, threadId, archived)),
);

/** The model the thread answers with from now on (null: its project's, else the default). */
export const setThreadModelAction = userAction(
  z.tuple([threadIdSchema, z.string().trim().min(1).max(200).nullable()]),
  async ([threadId, model], ctx) => {
    const u = await changer(ctx, threadId);
    await setThreadModel(u.db, u.userId, threadId, model);
  },
);

export const deleteThreadAction = userAction(thread, async ([threadId], ctx) => {
  const u = await changer(ctx, threadId);
  await deleteThread(u.db, u.userId, threadId);
});

/** Changes a thread, then returns its new view for the chat to show. */
const changeThread =
  (change: (u: UserContext, threadId: string) => Promise<unknown>) =>
  async ([threadId]: z.output<typeof thread>, ctx: UserActionContext) => {
    await change(await changer(ctx, threadId), threadId);
    return viewOf(ctx, threadId);
  };

export const switchBranchAction = userAction(
  z.tuple([threadIdSchema, threadIdSchema]),
  async ([threadId, itemId], ctx) => {
    const u = await changer(ctx, threadId);
    await switchBranch(u.db, u.userId, threadId, itemId);
    return viewOf(ctx, threadId);
  },
);

/** The thread after the undo, and how many memories learned from that turn were withdrawn with it. */
export const undoTurnAction = userAction(thread, async ([threadId], ctx) => {
  const { withdrawn } = await undoLastTurn(await changer(ctx, threadId), threadId);
  return { view: await viewOf(ctx, threadId), withdrawn };
});

export const clearThreadAction = userAction(thread, changeThread(clearThread));

/**
 * 👍 / 👎 (rating 1 / -1, with an optional comment) on one of the user's answers; null removes the rating. Rated by
 * whoever may continue the chat (in a shared project, its author): the lesson is the thread's owner's.
 */
export const rateAnswerAction = userAction(z.tuple([rateInput]), async ([input], ctx) =>
  rateAnswer(await answerContext(ctx, input.itemId), input),
);

/** The sidebar's search by content: the user's messages matching every word, newest first. */
export const searchMessagesAction = userAction(z.tuple([searchMessagesInput]), ([input], ctx) =>
  searchMessages(ctx, input),
);
