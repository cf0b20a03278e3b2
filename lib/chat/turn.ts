// One chat turn, streamed:
//  1. save the user's message and an empty "streaming" answer (one statement,
//     which also checks that the thread is the user's and the user is enabled),
//  2. load the context window and summary (one query), build the prompt,
//  3. stream the model's tokens to the caller, saving the partial answer as it grows,
//  4. save the final answer (complete / stopped / failed) with model and usage,
//     renewing the answer's lease meanwhile (a crash leaves it "interrupted"),
//  5. queue the work after the answer (title, summary, learning) on the
//     durable job queue (lib/jobs), off the hot path.
// The user's message is saved before the model is called, so a failing model
// never loses it; the answer is marked failed and can be retried.
import { recordUsage } from "@/lib/account/usage-ledger";
import { assertSessionMayAct, type SessionProof } from "@/lib/auth/session-check";
import OpenAI from "openai";
import { cipherFor, sealJson, type ContentCipher } from "@/lib/crypto/content";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { resolveConnectionCached, type ModelConnection } from "@/lib/llm/connection";
import { describeModelError, openaiClient } from "@/lib/llm/client";
import { checkLimits } from "@/lib/account/usage-limits";
import {
  appendItems,
  appendItemsMeta,
  publicItem,
  type AppendMeta,
  type NewItem,
  type SessionItem,
  type ToolCall,
} from "@/lib/memory/session";
import { embedQuery } from "@/lib/llm/embeddings";
import { recordCorrection } from "@/lib/memory/feedback";
import { recordUses } from "@/lib/memory/long-term";
import { memoryBlock, recall, type Recall } from "@/lib/memory/recall";
import { MEMORY_TOOLS, runMemoryTool } from "@/lib/memory/tools";
import { messageTokens } from "@/lib/memory/tokens";
import { buildPrompt, loadContext, type Context } from "./context";
import { createThread, ThreadNotFoundError } from "./threads";
import { provisionalTitle } from "./titles";
import type { Defer } from "./background";
import { renewLease, RENEW_MS } from "./leases";
import { enqueue, type NewJob } from "@/lib/jobs/queue";
import { drainJobs } from "@/lib/jobs/worker";
import { isDatabaseUnavailable } from "@/lib/errors";
import { AppError } from "@/lib/errors";
import { cleanText } from "@/lib/text/policy";
import { readTogether } from "@/lib/db/function-calls";

/** What a user is told when a message is too long. */
export const messageLimit = (max: number) => `Messages are limited to ${max.toLocaleString("en-US")} characters.`;

export function messageSchema() {
  const max = getConfig().chat.maxMessageChars;
  const limit = messageLimit(max);
  return z
    .string({ error: "Type a message." })
    .transform(cleanText)
    .pipe(
      z
        .string()
        .max(max, limit)
        .refine((s) => s.trim().length > 0, "Type a message."),
    );
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

export class TurnError extends AppError {
  constructor(message: string, status: number) {
    super(message, status);
  }
}

const FLUSH_MS = 500;

// Generations running in this process, by answer id, with their owner, so Stop
// is immediate here; on another instance the stop is seen at the next flush or
// lease renewal (status no longer "streaming"), so Stop works whichever
// instance serves the stream.
const running = new Map<string, { abort: AbortController; userId: string }>();

/**
 * Registers a generation running in this process (runTurn does; the authorization tests watch Stop's effect with it).
 */
export function trackGeneration(itemId: string, userId: string, abort = new AbortController()): AbortController {
  running.set(itemId, { abort, userId });
  return abort;
}
export const untrackGeneration = (itemId: string) => running.delete(itemId);

/** Stops an answer that is being written. Returns false if it is not the user's or not streaming. */
export async function stopTurn(db: Db, userId: string, itemId: string): Promise<boolean> {
  const r = await db.item.updateMany({
    where: { id: itemId, status: "streaming", thread: { userId } },
    data: { status: "stopped" },
  });
  // Ownership first: nothing in this process is touched unless the database said it is this user's answer.
  if (r.count === 0) return false;
  const run = running.get(itemId);
  if (run?.userId === userId) run.abort.abort();
  return true;
}

/** The time a model stream may stay silent before the answer fails. */
const idleTimeoutMs = () => getConfig().chat.modelIdleTimeoutSeconds * 1000;

/** The user's daily limit is reached: the answer fails with this sentence (the question stays saved). */
class UsageLimitError extends Error {}

class ModelIdleError extends Error {
  constructor(seconds: number) {
    super(`The model stopped sending its answer (nothing for ${seconds} seconds). Retry to try again.`);
  }
}

/** Saves an answer's final state, retrying briefly: a database restart should not leave it streaming. */
async function finishRetrying(
  db: Db,
  c: ContentCipher,
  itemId: string,
  data: Partial<SessionItem>,
): Promise<SessionItem> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await finish(db, c, itemId, data);
    } catch (e) {
      if (attempt >= 3 || !isDatabaseUnavailable(e)) throw e;
      await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
    }
  }
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
async function prepare(
  db: Db,
  userId: string,
  req: TurnRequest,
  c: ContentCipher,
  session?: SessionProof,
): Promise<Prepared> {
  const state = await resolveConnectionCached(db);
  if (!state.configured) throw new TurnError(state.reason, 409);
  const conn = state.connection;
  const placeholder: NewItem = { role: "assistant", status: "streaming", model: conn.chatModel };

  // Whether the session may act is folded into the append below; a new thread is written before it, so a new
  // thread's first message checks the session first (an ended session must leave nothing behind).
  const refused = async (): Promise<never> => {
    if (session) await assertSessionMayAct(db, userId, session);
    throw new ThreadNotFoundError();
  };
  if (req.kind === "send") {
    if (!req.threadId && session) await assertSessionMayAct(db, userId, session);
    const threadId =
      req.threadId ??
      (await createThread(db, userId, { temporary: req.temporary, title: provisionalTitle(req.content) })).id;
    const { items: added, meta } = await appendItemsMeta(
      db,
      threadId,
      [{ role: "user", content: req.content }, placeholder],
      { ownerId: userId, session, cipher: c },
    );
    if (!added.length) return refused();
    return {
      threadId,
      userItem: added[0],
      assistant: added[1],
      conn,
      firstExchange: added[0].position === 0,
      meta: meta ?? NO_META,
    };
  }

  const target = await db.item.findFirst({
    where: { id: req.itemId, threadId: req.threadId, thread: { userId } },
    select: { id: true, parentId: true, role: true, status: true },
  });
  if (!target) throw new ThreadNotFoundError();

  if (req.kind === "edit") {
    if (target.role !== "user") throw new TurnError("Only your own messages can be edited.", 400);
    const { items: added, meta } = await appendItemsMeta(
      db,
      req.threadId,
      [{ role: "user", content: req.content }, placeholder],
      {
        parent: target.parentId,
        ownerId: userId,
        session,
        cipher: c,
      },
    );
    if (!added.length) return refused();
    return {
      threadId: req.threadId,
      userItem: added[0],
      assistant: added[1],
      conn,
      firstExchange: false,
      meta: meta ?? NO_META,
    };
  }

  // regenerate (a new branch) or retry (a failed answer is replaced)
  if (target.role !== "assistant" || !target.parentId) throw new TurnError("Only answers can be regenerated.", 400);
  const { items: added, meta } = await appendItemsMeta(db, req.threadId, [placeholder], {
    parent: target.parentId,
    ownerId: userId,
    session,
    cipher: c,
  });
  if (!added.length) return refused();
  // Replaced by the new answer (removed after the append, so a refused session changes nothing).
  if (target.status === "failed") await db.item.deleteMany({ where: { id: target.id, status: "failed" } });
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
  return publicItem({
    ...row,
    content: data.content ?? c.open(row.content),
    toolCalls: null,
  } as unknown as SessionItem);
}

export async function* runTurn(
  db: Db,
  userId: string,
  input: unknown,
  opts: { defer?: Defer; onContext?: (ctx: Context) => void; session?: SessionProof } = {},
): AsyncGenerator<TurnEvent> {
  const parsed = turnRequestSchema().safeParse(input);
  if (!parsed.success) throw new TurnError(parsed.error.issues[0].message, 400);
  const c = await cipherFor(db, userId);
  const p = await prepare(db, userId, parsed.data, c, opts.session);
  yield {
    type: "start",
    threadId: p.threadId,
    userItemId: p.userItem.id,
    assistantItemId: p.assistant.id,
    model: p.conn.chatModel,
  };

  // Long-term memory is neither read nor written in temporary chats.
  const useMemory = !p.meta.temporary;
  const memBudget = getConfig().memory.tokenBudget;
  // No lease renewal here: until the heartbeat's first one, the sweeper measures the answer's lease from its
  // updatedAt, which the append just set (an UPDATE beside the reads was a round trip of its own on PGlite).
  // The window's and recall's reads travel as one statement (lib/db/function-calls.ts).
  const [ctx, recalled, overLimit] = await readTogether(() =>
    Promise.all([
      loadContext(db, p.threadId, p.assistant.parentId ?? p.userItem.id, { cipher: c }),
      useMemory && memBudget > 0
        ? recall(db, userId, p.userItem.content, {
            budget: memBudget,
            excludeThreadId: p.threadId,
            // By meaning too, when an embedding model is set (short timeout; words alone otherwise).
            semantic: p.conn.embeddingModel ? embedQuery(db, p.userItem.content, userId) : undefined,
          })
        : Promise.resolve<Recall>({ memories: [], passages: [], tokens: 0 }),
      checkLimits(db, userId),
    ]),
  );
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
  trackGeneration(assistant.id, userId, abort);
  // The lease says this instance is still writing; a crash lets it run out (lib/chat/leases.ts).
  const heartbeat = setInterval(() => {
    const id = assistant.id;
    void renewLease(db, id)
      .then((alive) => {
        if (!alive && assistant.id === id) abort.abort(); // stopped from another instance
      })
      .catch(() => undefined);
  }, RENEW_MS);
  const promptTokens = { prompt: 0, completion: 0, any: false };
  let modelCalls = 0; // for the usage ledger, whatever way the answer ends
  // The ledger counts what the model was asked, however the answer ended (lib/account/usage-ledger.ts);
  // before the last event, so the stream closes right after it.
  const charge = async () => {
    if (!modelCalls) return;
    const calls = modelCalls;
    modelCalls = 0;
    await recordUsage(db, userId, {
      turns: 1,
      modelCalls: calls,
      tokens: promptTokens.prompt + promptTokens.completion,
    }).catch((e) => console.error(`[mnemo] usage ledger: ${(e as Error).message.split("\n").slice(-1)[0]}`));
  };
  let idle: ReturnType<typeof setTimeout> | undefined;
  try {
    if (overLimit) throw new UsageLimitError(overLimit);
    for (let round = 0; ; round++) {
      text = "";
      let lastFlush = Date.now();
      let flushing: Promise<unknown> = Promise.resolve();
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      // A stream that goes silent (a stalled server) fails after the idle timeout.
      const stall = new AbortController();
      let stalled: ModelIdleError | null = null;
      const armIdle = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          stalled = new ModelIdleError(getConfig().chat.modelIdleTimeoutSeconds);
          stall.abort();
        }, idleTimeoutMs());
      };
      armIdle();
      modelCalls++;
      const stream = await openaiClient(p.conn)
        .chat.completions.create(
          {
            model: p.conn.chatModel,
            messages,
            stream: true,
            stream_options: { include_usage: true },
            ...(tools && round < 3 ? { tools } : {}),
          },
          // No automatic retry: a failed answer is shown at once, with a Retry button.
          { signal: AbortSignal.any([abort.signal, stall.signal]), maxRetries: 0 },
        )
        .catch((e) => {
          throw stalled ?? e;
        });
      try {
        for await (const chunk of stream) {
          armIdle();
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
      } catch (e) {
        throw stalled && !abort.signal.aborted ? stalled : e;
      } finally {
        clearTimeout(idle);
      }
      await flushing;
      if (abort.signal.aborted) throw new OpenAI.APIUserAbortError();
      if (stall.signal.aborted) throw new ModelIdleError(getConfig().chat.modelIdleTimeoutSeconds);
      if (!calls.size) break;

      // Tool round: keep the calls on this answer item, save each result, and
      // continue in a new answer item below them.
      const toolCalls: ToolCall[] = [...calls.values()].map((c, i) => ({
        id: c.id || `call_${i}`,
        name: c.name,
        arguments: c.arguments,
      }));
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
        const r = await runMemoryTool(
          { db, userId, threadId: p.threadId, itemId: p.userItem.id, paused: p.meta.memoryPaused },
          c.name,
          c.arguments,
        );
        results.push({ role: "tool", content: r.result, toolCallId: c.id, toolName: c.name });
      }
      const added = await appendItems(
        db,
        p.threadId,
        [...results, { role: "assistant", status: "streaming", model: p.conn.chatModel }],
        {
          parent: assistant.id,
          cipher: c,
        },
      );
      running.delete(assistant.id);
      const next = added[added.length - 1];
      await renewLease(db, next.id).catch(() => undefined);
      for (const [i, c] of toolCalls.entries())
        yield { type: "tool", name: c.name, result: results[i].content ?? "", assistantItemId: next.id };
      messages = [
        ...messages,
        {
          role: "assistant",
          content: text || null,
          tool_calls: toolCalls.map((c) => ({
            id: c.id,
            type: "function" as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        },
        ...toolCalls.map((c, i) => ({ role: "tool" as const, tool_call_id: c.id, content: results[i].content ?? "" })),
      ];
      assistant = next;
      trackGeneration(assistant.id, userId, abort);
    }
    final = await finishRetrying(db, c, assistant.id, {
      content: text,
      status: "complete",
      promptTokens: promptTokens.any ? promptTokens.prompt : null,
      completionTokens: promptTokens.any ? promptTokens.completion : null,
    });
    const used = recalled.memories.map((m) => ({ id: m.id, text: m.text }));
    if (used.length)
      await recordUses(
        db,
        userId,
        final.id,
        used.map((m) => m.id),
      );
    // Work after the answer goes on the durable queue before the answer is
    // reported done: a process killed now still learns from it on restart.
    // "No, I meant…" / "don't use bullet points": feedback on the answer before this message.
    if (useMemory && !p.meta.memoryPaused) {
      await recordCorrection(db, userId, { ...p.userItem, threadId: p.threadId }).catch((e) =>
        console.error(
          `[mnemo] could not record a correction for ${p.userItem.id}: ${(e as Error).message.split("\n").slice(-1)[0]}`,
        ),
      );
    }
    await enqueue(db, afterAnswerJobs(p, userId, final.id, ctx.unsummarized.length > 0, useMemory)).catch((e) =>
      console.error(
        `[mnemo] could not queue work after answer ${final.id}: ${(e as Error).message.split("\n").slice(-1)[0]}`,
      ),
    );
    await charge();
    yield { type: "done", item: final, memoriesUsed: used };
  } catch (e) {
    const aborted = abort.signal.aborted || e instanceof OpenAI.APIUserAbortError;
    clearInterval(heartbeat);
    if (aborted) {
      final = await finishRetrying(db, c, assistant.id, { content: text, status: "stopped" });
      await charge();
      yield { type: "done", item: final, memoriesUsed: [] };
    } else if (isDatabaseUnavailable(e)) {
      // The answer cannot be saved now; its lease runs out and the sweeper marks it interrupted.
      throw e;
    } else {
      const message = e instanceof ModelIdleError || e instanceof UsageLimitError ? e.message : describeModelError(e);
      final = await finishRetrying(db, c, assistant.id, { content: text, status: "failed", error: message });
      await charge();
      yield { type: "error", message, item: final };
    }
  } finally {
    clearInterval(heartbeat);
    clearTimeout(idle);
    running.delete(assistant.id);
    await charge(); // if the answer ended without reporting (a database outage)
  }
  // The instance that served the answer runs its queued work right after the
  // response (Next's after() keeps a serverless instance alive for it), in the
  // process's one job drain; any other worker would pick it up too.
  if (final.status === "complete" && getConfig().jobsInProcess) opts.defer?.(() => drainJobs(db));
}

/** The queued work after a complete answer: title (first exchange), summary, learning. */
function afterAnswerJobs(
  p: Prepared,
  userId: string,
  answerId: string,
  summarize: boolean,
  useMemory: boolean,
): NewJob[] {
  const jobs: NewJob[] = [];
  const ids = { threadId: p.threadId, userItemId: p.userItem.id, answerItemId: answerId };
  if (p.firstExchange) jobs.push({ kind: "title", userId, payload: ids, dedupeKey: `title:${p.threadId}` });
  if (summarize && getConfig().chat.summaries) {
    jobs.push({
      kind: "summary",
      userId,
      payload: { threadId: p.threadId, leafId: answerId },
      dedupeKey: `summary:${answerId}`,
    });
  }
  // Automatic learning: not in temporary chats, not while memory is paused.
  if (useMemory && !p.meta.memoryPaused)
    jobs.push({ kind: "extract", userId, payload: { userId, ...ids }, dedupeKey: `extract:${answerId}` });
  // The exchange's vectors, for recall by meaning in later threads (a no-op without an embedding model).
  if (useMemory && p.conn.embeddingModel)
    jobs.push({ kind: "embed", userId, payload: { userId }, dedupeKey: `embed:${answerId}` });
  return jobs;
}
