// One chat turn, streamed:
//  1. save the user's message and an empty "streaming" answer (one statement,
//     which also checks that the thread is the user's and the user is enabled),
//  2. load the context window and summary (one query), build the prompt,
//  3. stream the model's tokens to the caller, saving the partial answer as it grows,
//  4. save the final answer (complete / stopped / failed) with model and usage,
//  5. after the answer: title and summary refresh, off the hot path.
// The user's message is saved before the model is called, so a failing model
// never loses it; the answer is marked failed and can be retried.
import OpenAI from "openai";
import { cipherFor, sealJson, type ContentCipher } from "@/lib/crypto/content";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { resolveConnectionCached, type ModelConnection } from "@/lib/llm/connection";
import { describeModelError, openaiClient } from "@/lib/llm/client";
import { appendItems, appendItemsMeta, type AppendMeta, type NewItem, type SessionItem, type ToolCall } from "@/lib/memory/session";
import { memoryBlock, recall, type Recall } from "@/lib/memory/recall";
import { MEMORY_TOOLS, runMemoryTool } from "@/lib/memory/tools";
import { extractMemories } from "@/lib/memory/extract";
import { expireUnusedMemories } from "@/lib/memory/long-term";
import { messageTokens } from "@/lib/memory/tokens";
import { buildPrompt, loadContext, type Context } from "./context";
import { createThread, ThreadNotFoundError } from "./threads";
import { generateTitle, provisionalTitle } from "./titles";
import { refreshSummary } from "./summaries";
import { runDetached, type Defer } from "./background";

export function messageSchema() {
  const max = getConfig().chat.maxMessageChars;
  return z
    .string({ error: "Type a message." })
    .max(max, `Messages are limited to ${max.toLocaleString("en-US")} characters.`)
    .refine((s) => s.trim().length > 0, "Type a message.");
}

const id = z.string().trim().min(1).max(64);
export function turnRequestSchema() {
  const content = messageSchema();
  return z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("send"), threadId: id.optional(), content, temporary: z.boolean().optional() }),
    z.object({ kind: z.literal("edit"), threadId: id, itemId: id, content }),
    z.object({ kind: z.literal("regenerate"), threadId: id, itemId: id }),
  ]);
}
export type TurnRequest = z.infer<ReturnType<typeof turnRequestSchema>>;

export type TurnEvent =
  | { type: "start"; threadId: string; userItemId: string; assistantItemId: string; model: string }
  | { type: "delta"; text: string }
  | { type: "tool"; name: string; result: string; assistantItemId: string }
  | { type: "done"; item: SessionItem; memoriesUsed: Array<{ id: string; text: string }> }
  | { type: "error"; message: string; item: SessionItem | null };

export class TurnError extends Error {
  constructor(
    message: string,
    public status: number,
  ) {
    super(message);
  }
}

const FLUSH_MS = 500;

// Generations running in this process, by answer id, so Stop is immediate here;
// on another instance the stop is seen at the next flush (status no longer
// "streaming"), so Stop works whichever instance serves the stream.
const running = new Map<string, AbortController>();

/** Stops an answer that is being written. Returns false if it is not the user's or not streaming. */
export async function stopTurn(db: Db, userId: string, itemId: string): Promise<boolean> {
  const r = await db.item.updateMany({ where: { id: itemId, status: "streaming", thread: { userId } }, data: { status: "stopped" } });
  running.get(itemId)?.abort();
  return r.count > 0;
}

type Prepared = {
  threadId: string;
  userItem: SessionItem;
  assistant: SessionItem;
  conn: ModelConnection;
  firstExchange: boolean;
  meta: AppendMeta;
};
const NO_META: AppendMeta = { temporary: false, memoryPaused: false, memoryReview: false };

/** Step 1: validate and save the question and an empty answer. */
async function prepare(db: Db, userId: string, req: TurnRequest, c: ContentCipher, sid?: string): Promise<Prepared> {
  const state = await resolveConnectionCached(db);
  if (!state.configured) throw new TurnError(state.reason, 409);
  const conn = state.connection;
  const placeholder: NewItem = { role: "assistant", status: "streaming", model: conn.chatModel };

  if (req.kind === "send") {
    const threadId = req.threadId ?? (await createThread(db, userId, { temporary: req.temporary, title: provisionalTitle(req.content) })).id;
    const { items: added, meta } = await appendItemsMeta(db, threadId, [{ role: "user", content: req.content }, placeholder], { ownerId: userId, ownerSid: sid, cipher: c });
    if (!added.length) throw new ThreadNotFoundError();
    return { threadId, userItem: added[0], assistant: added[1], conn, firstExchange: added[0].position === 0, meta: meta ?? NO_META };
  }

  const target = await db.item.findFirst({
    where: { id: req.itemId, threadId: req.threadId, thread: { userId } },
    select: { id: true, parentId: true, role: true, status: true },
  });
  if (!target) throw new ThreadNotFoundError();

  if (req.kind === "edit") {
    if (target.role !== "user") throw new TurnError("Only your own messages can be edited.", 400);
    const { items: added, meta } = await appendItemsMeta(db, req.threadId, [{ role: "user", content: req.content }, placeholder], {
      parent: target.parentId,
      ownerId: userId,
      ownerSid: sid,
      cipher: c,
    });
    if (!added.length) throw new ThreadNotFoundError();
    return { threadId: req.threadId, userItem: added[0], assistant: added[1], conn, firstExchange: false, meta: meta ?? NO_META };
  }

  // regenerate (a new branch) or retry (a failed answer is replaced)
  if (target.role !== "assistant" || !target.parentId) throw new TurnError("Only answers can be regenerated.", 400);
  if (target.status === "failed") await db.item.deleteMany({ where: { id: target.id, status: "failed" } });
  const { items: added, meta } = await appendItemsMeta(db, req.threadId, [placeholder], { parent: target.parentId, ownerId: userId, ownerSid: sid, cipher: c });
  if (!added.length) throw new ThreadNotFoundError();
  // The question this answer belongs to (after tool rounds, walk back to it).
  const path = await loadContext(db, req.threadId, target.parentId, { budget: 1_000_000, maxItems: 20, cipher: c });
  const parentRow = async () => {
    const row = await db.item.findUniqueOrThrow({ where: { id: target.parentId! } });
    return { ...row, content: c.open(row.content) };
  };
  const userItem = [...path.window].reverse().find((i) => i.role === "user") ?? (await parentRow());
  return {
    threadId: req.threadId,
    userItem: { ...userItem, toolCalls: null } as unknown as SessionItem,
    assistant: added[0],
    conn,
    firstExchange: false,
    meta: meta ?? NO_META,
  };
}

async function finish(db: Db, c: ContentCipher, itemId: string, data: Partial<SessionItem>): Promise<SessionItem> {
  const row = await db.item.update({
    where: { id: itemId },
    data: {
      content: data.content !== undefined ? c.seal(data.content) : undefined,
      searchTokens: data.content !== undefined ? c.searchTokens(data.content) : undefined,
      status: data.status,
      error: data.error,
      model: data.model,
      promptTokens: data.promptTokens,
      completionTokens: data.completionTokens,
      tokens: data.content !== undefined ? messageTokens(data.content) : undefined,
    },
  });
  return { ...row, content: data.content ?? c.open(row.content), toolCalls: null } as unknown as SessionItem;
}

export async function* runTurn(
  db: Db,
  userId: string,
  input: unknown,
  opts: { defer?: Defer; onContext?: (ctx: Context) => void; sid?: string } = {},
): AsyncGenerator<TurnEvent> {
  const parsed = turnRequestSchema().safeParse(input);
  if (!parsed.success) throw new TurnError(parsed.error.issues[0].message, 400);
  const c = await cipherFor(db, userId);
  const p = await prepare(db, userId, parsed.data, c, opts.sid);
  yield { type: "start", threadId: p.threadId, userItemId: p.userItem.id, assistantItemId: p.assistant.id, model: p.conn.chatModel };

  // Long-term memory is neither read nor written in temporary chats.
  const useMemory = !p.meta.temporary;
  const memBudget = getConfig().memory.tokenBudget;
  const [ctx, recalled] = await Promise.all([
    loadContext(db, p.threadId, p.assistant.parentId ?? p.userItem.id, { cipher: c }),
    useMemory && memBudget > 0
      ? recall(db, userId, p.userItem.content, { budget: memBudget, excludeThreadId: p.threadId })
      : Promise.resolve<Recall>({ memories: [], passages: [], tokens: 0 }),
  ]);
  opts.onContext?.(ctx);
  const block = memoryBlock(recalled);
  let messages = buildPrompt(ctx, block);
  const tools = useMemory ? MEMORY_TOOLS : undefined;

  let assistant = p.assistant;
  let text = "";
  let final!: SessionItem;
  // Only Stop ends a generation: a closed tab or a reload lets the answer finish
  // (it is saved as it grows), so the reloaded page shows it.
  const abort = new AbortController();
  running.set(assistant.id, abort);
  const promptTokens = { prompt: 0, completion: 0, any: false };
  try {
    for (let round = 0; ; round++) {
      text = "";
      let lastFlush = Date.now();
      let flushing: Promise<unknown> = Promise.resolve();
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      const stream = await openaiClient(p.conn).chat.completions.create(
        {
          model: p.conn.chatModel,
          messages,
          stream: true,
          stream_options: { include_usage: true },
          ...(tools && round < 3 ? { tools } : {}),
        },
        // No automatic retry: a failed answer is shown at once, with a Retry button.
        { signal: abort.signal, maxRetries: 0 },
      );
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (chunk.usage) {
          promptTokens.prompt += chunk.usage.prompt_tokens;
          promptTokens.completion += chunk.usage.completion_tokens;
          promptTokens.any = true;
        }
        for (const tc of choice?.delta?.tool_calls ?? []) {
          const c = calls.get(tc.index) ?? { id: "", name: "", arguments: "" };
          if (tc.id) c.id = tc.id;
          if (tc.function?.name) c.name += tc.function.name;
          if (tc.function?.arguments) c.arguments += tc.function.arguments;
          calls.set(tc.index, c);
        }
        const delta = choice?.delta?.content;
        if (delta) {
          text += delta;
          yield { type: "delta", text: delta };
          if (Date.now() - lastFlush > FLUSH_MS) {
            // Saved while streaming, so a reload mid-answer shows what arrived so far.
            lastFlush = Date.now();
            const snapshot = text;
            const id = assistant.id;
            flushing = flushing.then(async () => {
              const r = await db.item
                .updateMany({ where: { id, status: "streaming" }, data: { content: c.seal(snapshot) } })
                .catch(() => ({ count: 1 }));
              if (r.count === 0) abort.abort(); // stopped from another instance
            });
          }
        }
      }
      await flushing;
      if (abort.signal.aborted) throw new OpenAI.APIUserAbortError();
      if (!calls.size) break;

      // Tool round: keep the calls on this answer item, save each result, and
      // continue in a new answer item below them.
      const toolCalls: ToolCall[] = [...calls.values()].map((c, i) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments }));
      await db.item.update({
        where: { id: assistant.id },
        data: {
          content: c.seal(text),
          searchTokens: c.searchTokens(text),
          toolCalls: sealJson(c, toolCalls),
          status: "complete",
          tokens: messageTokens(text, JSON.stringify(toolCalls)),
        },
      });
      const results: NewItem[] = [];
      for (const c of toolCalls) {
        const r = await runMemoryTool({ db, userId, threadId: p.threadId, itemId: p.userItem.id, paused: p.meta.memoryPaused }, c.name, c.arguments);
        results.push({ role: "tool", content: r.result, toolCallId: c.id, toolName: c.name });
      }
      const added = await appendItems(db, p.threadId, [...results, { role: "assistant", status: "streaming", model: p.conn.chatModel }], {
        parent: assistant.id,
        cipher: c,
      });
      running.delete(assistant.id);
      const next = added[added.length - 1];
      for (const [i, c] of toolCalls.entries()) yield { type: "tool", name: c.name, result: results[i].content ?? "", assistantItemId: next.id };
      messages = [
        ...messages,
        { role: "assistant", content: text || null, tool_calls: toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })) },
        ...toolCalls.map((c, i) => ({ role: "tool" as const, tool_call_id: c.id, content: results[i].content ?? "" })),
      ];
      assistant = next;
      running.set(assistant.id, abort);
    }
    final = await finish(db, c, assistant.id, {
      content: text,
      status: "complete",
      promptTokens: promptTokens.any ? promptTokens.prompt : null,
      completionTokens: promptTokens.any ? promptTokens.completion : null,
    });
    const used = recalled.memories.map((m) => ({ id: m.id, text: m.text }));
    if (used.length) {
      await db.memoryUse.createMany({ data: used.map((m) => ({ itemId: final.id, memoryId: m.id, userId })), skipDuplicates: true });
      await db.memory.updateMany({ where: { id: { in: used.map((m) => m.id) }, userId }, data: { lastUsedAt: new Date() } });
    }
    yield { type: "done", item: final, memoriesUsed: used };
  } catch (e) {
    const aborted = abort.signal.aborted || e instanceof OpenAI.APIUserAbortError;
    if (aborted) {
      final = await finish(db, c, assistant.id, { content: text, status: "stopped" });
      yield { type: "done", item: final, memoriesUsed: [] };
    } else {
      const message = describeModelError(e);
      final = await finish(db, c, assistant.id, { content: text, status: "failed", error: message });
      yield { type: "error", message, item: final };
    }
  }

  running.delete(assistant.id);
  if (final.status === "complete") {
    const defer = opts.defer ?? ((task) => void runDetached("turn", task));
    if (p.firstExchange) defer(() => runDetached("title", () => generateTitle(db, p.conn, p.threadId, p.userItem.content, text)));
    if (ctx.unsummarized.length) defer(() => runDetached("summary", () => refreshSummary(db, p.conn, p.threadId, ctx.summary, ctx.unsummarized)));
    // Automatic learning: not in temporary chats, not while memory is paused.
    if (useMemory && !p.meta.memoryPaused) {
      const answer = text;
      defer(() =>
        runDetached("memory extraction", async () => {
          await extractMemories(db, p.conn, {
            userId,
            threadId: p.threadId,
            userItemId: p.userItem.id,
            question: p.userItem.content,
            answer,
            review: p.meta.memoryReview,
          });
          await expireUnusedMemories(db, userId, getConfig().memory.expireUnusedDays);
        }),
      );
    }
  }
}
