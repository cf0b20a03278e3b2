// The Conversations API (/v1/conversations and its items), so the Agents SDK's OpenAIConversationsSession keeps an
// agent's history in Mnemo: each conversation is a Mnemo thread of the key's user (in the key's project), listed in
// the sidebar "via <key name>", exported and deleted like every thread. Its items are the thread's active branch,
// one Responses item per Mnemo item (lib/api/response-items.ts).
import { z } from "zod";
import type { KeyCaller } from "@/lib/keys/api-keys";
import { AppError } from "@/lib/errors";
import { appendItems, pathItems, removeItem, type SessionItem } from "@/lib/memory/session";
import { provisionalTitle } from "@/lib/chat/titles";
import { inputItem, mnemoItemId, toApiItems, toNewItem } from "./response-items";

export const conversationId = (threadId: string) => `conv_${threadId}`;

export const createConversationInput = z.object({
  items: z.array(inputItem).max(2000).nullish(),
  metadata: z.record(z.string(), z.string().max(512)).nullish(),
});
export const addItemsInput = z.object({ items: z.array(inputItem).min(1).max(2000) });
export const listItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  after: z.string().max(100).optional(),
});

/** The thread of a conversation the key's user owns (a project key: in its project), else 404. */
export async function conversationThread(caller: KeyCaller, id: string) {
  const { u } = caller;
  const threadId = /^conv_([A-Za-z0-9_-]{1,64})$/.exec(id)?.[1];
  const thread =
    threadId &&
    (await u.db.thread.findFirst({
      where: {
        id: threadId,
        userId: u.userId,
        temporary: false,
        ...(u.scope.projectId ? { projectId: u.scope.projectId } : {}),
        // A shared project's key reaches the conversations its owner started there, no one else's.
        ...(u.actorId !== u.userId ? { authorId: u.actorId } : {}),
      },
      select: { id: true, activeLeafId: true, createdAt: true },
    }));
  if (!thread) throw new AppError(`No conversation ${id}.`, 404);
  return thread;
}

const conversationObject = (t: { id: string; createdAt: Date }) => ({
  id: conversationId(t.id),
  object: "conversation" as const,
  created_at: Math.floor(t.createdAt.getTime() / 1000),
  metadata: {},
});

export async function createConversation(caller: KeyCaller, input: z.infer<typeof createConversationInput>) {
  const { u } = caller;
  const items = (input.items ?? []).map(toNewItem).filter((i) => i !== null);
  const opening = items.find((i) => i.role === "user")?.content ?? "Conversation";
  const thread = await u.db.thread.create({
    data: {
      userId: u.userId,
      authorId: u.actorId !== u.userId ? u.actorId : null,
      apiKeyId: caller.keyId,
      projectId: u.scope.projectId,
      title: u.cipher.seal(provisionalTitle(opening)),
    },
  });
  if (items.length) await appendItems(u.db, thread.id, items, { cipher: u.cipher, as: u });
  return conversationObject(thread);
}

export async function retrieveConversation(caller: KeyCaller, id: string) {
  return conversationObject(await conversationThread(caller, id));
}

export async function deleteConversation(caller: KeyCaller, id: string) {
  const t = await conversationThread(caller, id);
  await caller.u.db.thread.deleteMany({ where: { id: t.id, userId: caller.u.userId } });
  return { id, object: "conversation.deleted" as const, deleted: true };
}

async function branch(caller: KeyCaller, id: string): Promise<SessionItem[]> {
  const t = await conversationThread(caller, id);
  return pathItems(caller.u.db, t.id, t.activeLeafId, 100_000, caller.u.cipher);
}

const itemList = (data: object[], hasMore = false) => ({
  object: "list" as const,
  data,
  first_id: (data[0] as { id?: string } | undefined)?.id ?? null,
  last_id: (data.at(-1) as { id?: string } | undefined)?.id ?? null,
  has_more: hasMore,
});

export async function listItems(caller: KeyCaller, id: string, q: z.infer<typeof listItemsQuery>) {
  const all = (await branch(caller, id)).flatMap(toApiItems) as Array<{ id: string }>;
  const ordered = q.order === "desc" ? all.reverse() : all;
  const from = q.after ? ordered.findIndex((i) => i.id === q.after) + 1 : 0;
  if (q.after && from === 0) throw new AppError(`after: no item ${q.after} in this conversation.`, 400);
  return itemList(ordered.slice(from, from + q.limit), ordered.length > from + q.limit);
}

export async function addItems(caller: KeyCaller, id: string, input: z.infer<typeof addItemsInput>) {
  const { u } = caller;
  const t = await conversationThread(caller, id);
  const items = input.items.map(toNewItem).filter((i) => i !== null);
  const stored = await appendItems(u.db, t.id, items, { cipher: u.cipher, as: u });
  return itemList(stored.flatMap(toApiItems));
}

export async function retrieveItem(caller: KeyCaller, id: string, apiItemId: string) {
  const found = (await branch(caller, id)).find((i) => i.id === mnemoItemId(apiItemId));
  const item = found && (toApiItems(found) as Array<{ id: string }>).find((i) => i.id === apiItemId);
  if (!item) throw new AppError(`No item ${apiItemId} in this conversation.`, 404);
  return item;
}

export async function deleteItem(caller: KeyCaller, id: string, apiItemId: string) {
  const t = await conversationThread(caller, id);
  if (!(await removeItem(caller.u.db, t.id, mnemoItemId(apiItemId))))
    throw new AppError(`No item ${apiItemId} in this conversation.`, 404);
  return conversationObject(t);
}
