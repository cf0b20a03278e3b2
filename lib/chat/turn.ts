// One chat turn, streamed, in named steps:
//  1. prepare: validate, save the user's message and an empty "streaming" answer (one statement, which also checks
//     that the thread is the user's and the session may act); the user's context is made once here,
//  2. readContext: the context window, recall and the usage check, read together,
//  3. streamRound: stream the model's tokens, saving the partial answer as it grows (a heartbeat renews its lease),
//  4. runTools: the memory tools the model called, then another round,
//  5. complete (or fail): save the answer with model and usage; queue the work after it (title, summary, learning).
// The user's message is saved before the model is called, so a failing model never loses it; the answer is marked
// failed and can be retried. The system prompt tells the model the user's date (./today.ts).
import {
  picturesRefusedByServer,
  attachmentsForAnswer,
  passagesUsed,
  threadAttachmentRows,
  type TurnAttachments,
} from "@/lib/attachments/prompt";
import { chargeAnswer, settleAnswer, settleUnfinished, type AnswerCharge, type MemoryUses } from "@/lib/answer/settle";
import { earlyQuestionVector, recallForAnswer, refitAfterRefusal, type EarlyQuestionVector } from "@/lib/answer/fit";
import { inMemoryScope, inSharedProject, userContext, type UserContext } from "@/lib/user-context";
import { projectScope } from "@/lib/projects/scope";
import { isLocalEndpoint } from "@/lib/memory/disclosure";
import { type SessionProof } from "@/lib/auth/session-check";
import OpenAI from "openai";
import { sealJson, type ContentCipher } from "@/lib/crypto/content";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { describeModelError, openaiClient } from "@/lib/llm/client";
import { classifyModelFailure } from "@/lib/llm/model-failure";
import { checkLimits } from "@/lib/account/usage-limits";
import { appendItems, type NewItem, type SessionItem, type ToolCall } from "@/lib/memory/session";
import { searchWaitsForVector } from "@/lib/memory/vectors";
import { recordCorrection } from "@/lib/memory/feedback";
import { memoryBlock, type Recall } from "@/lib/memory/recall";
import { chatToolCaller, MEMORY_TOOLS, runMemoryTool } from "@/lib/memory/tools";
import { countTokens, MESSAGE_OVERHEAD, messageTokens } from "@/lib/memory/tokens";
import { buildPrompt, loadContext, toolMessages, type Context } from "./context";
import { systemPromptFor } from "./today";
import { takeChunk, type Round } from "./round";
import type { Defer } from "./background";
import { renewLease, RENEW_MS } from "./leases";
import { drainJobs } from "@/lib/jobs/worker";
import { AppError, isDatabaseUnavailable } from "@/lib/errors";
import { readTogetherAfter } from "@/lib/db/function-calls";
import { ownMemoryContext } from "@/lib/projects/own-memory";
import type { TurnEvent } from "./turn-events";
import { LeadingReasoningFilter } from "@/lib/llm/model-reply";
import { refusesFeature, rememberRefusal, withoutRefused, type Feature } from "@/lib/llm/server-quirks";
import { fittedBudgets, knownPromptLimit, noteReportedPrompt, promptTokens } from "@/lib/llm/prompt-limits";
import { turnStep } from "@/lib/ops/turn-timeline";
import { turnRequestSchema, prepareAs, type Prepared } from "./turn-request";
import { finishRetrying, partialSaver, running, trackGeneration } from "./generations";
import { ModelIdleError, OnlyThinkingError, promptCutNotice, UsageLimitError } from "./turn-errors";
export type { TurnEvent } from "./turn-events";
export { messageLimit, messageSchema, turnRequestSchema, type TurnRequest } from "./turn-request";
export { stopTurn, trackGeneration, untrackGeneration } from "./generations";
export { promptCutNotice } from "./turn-errors";

/** The time a model stream may stay silent before the answer fails. */
const idleTimeoutMs = () => getConfig().chat.modelIdleTimeoutSeconds * 1000;

export async function* runTurn(
  db: Db,
  userId: string,
  input: unknown,
  opts: {
    defer?: Defer;
    onContext?: (ctx: Context) => void;
    session?: SessionProof;
    /** The asker administers this instance: a model server's failure comes with what to do about it. */
    admin?: boolean;
  } = {},
): AsyncGenerator<TurnEvent> {
  const parsed = turnRequestSchema().safeParse(input);
  if (!parsed.success) throw new AppError(parsed.error.issues[0].message, 400);
  const req = parsed.data;
  const early = req.kind === "send" && !req.temporary ? earlyQuestionVector(db, req, userId) : undefined;
  const { u, p } = await prepareAs(await userContext(db, userId), req, opts.session);
  yield {
    type: "start",
    threadId: p.threadId,
    userItemId: p.userItem.id,
    assistantItemId: p.assistant.id,
    model: p.conn.chatModel,
    modelNote: p.modelNote,
  };
  const run = new TurnRun(u, p, await early, !!opts.admin, systemPromptFor(req.timeZone));
  const final = yield* run.answer(opts.onContext);
  // The instance that served the answer runs its queued work right after the response (Next's after() keeps a
  // serverless instance alive for it), in the process's one job drain; any other worker would pick it up too.
  if (final?.status === "complete" && getConfig().jobsInProcess) opts.defer?.(() => drainJobs(db));
}

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** One answer being written: its state across rounds, and the steps 2–5 above. */
class TurnRun {
  private assistant: SessionItem;
  // Only Stop ends a generation: a closed tab or a reload lets the answer finish
  // (it is saved as it grows), so the reloaded page shows it.
  private readonly abort = new AbortController();
  private heartbeat?: ReturnType<typeof setInterval>;
  private usage = { prompt: 0, completion: 0, any: false };
  private modelCalls = 0; // for the usage ledger, whatever way the answer ends
  private sentMemoryIds: string[] = []; // what left the box with this answer's requests
  /** The server read only part of a prompt of this answer (tokens as Mnemo counted them, and as it reported). */
  private promptCut: { sent: number; reported: number } | null = null;
  /** The history budget the context was last read with (the summary job reads the same window). */
  private historyBudget = 0;

  private readonly db: Db;
  private readonly userId: string;
  private readonly c: ContentCipher;
  /** The user's context in the thread's memory scope (lib/projects/scope.ts): recall, tools and learning use it. */
  private readonly u: UserContext;
  private readonly own: Promise<UserContext | null>;

  constructor(
    given: UserContext,
    private readonly p: Prepared,
    /** The question's vector, started before the append (`earlyQuestionVector`). */
    private readonly early?: EarlyQuestionVector,
    private readonly forAdmin = false,
    /** The configured system prompt with the user's date (./today.ts), the same in every round of this answer. */
    private readonly system = systemPromptFor(),
  ) {
    // Private memories only for a model on this machine (lib/memory/disclosure.ts).
    const scope = projectScope(p.meta.project, inSharedProject(given));
    this.u = inMemoryScope(given, { ...scope, privateOk: isLocalEndpoint(p.conn.baseURL) });
    // A member's own memory, when the shared project's mode lets it help their own turns (its key loads meanwhile).
    this.own = ownMemoryContext(this.u, p.meta.project?.memoryMode).catch(() => null);
    ({ db: this.db, userId: this.userId, cipher: this.c } = this.u);
    this.assistant = p.assistant;
  }

  /** Steps 2–5, with every way an answer can end; returns the saved answer (none when the database is gone). */
  async *answer(onContext?: (ctx: Context) => void): AsyncGenerator<TurnEvent, SessionItem | undefined> {
    const useMemory = !this.p.meta.temporary; // long-term memory is neither read nor written in temporary chats
    const { conn } = this.p;
    const tools = useMemory ? MEMORY_TOOLS : undefined;
    // Within what this model server is known to read whole (lib/llm/prompt-limits.ts), when it is known.
    const first = await this.readContext(useMemory, knownPromptLimit(conn, conn.chatModel));
    let { ctx, recalled, attached } = first;
    onContext?.(ctx);
    const instructions = this.p.meta.project?.instructions;
    let messages = buildPrompt(ctx, memoryBlock(recalled), this.system, instructions, attached);
    trackGeneration(this.assistant.id, this.u.actorId, this.abort);
    this.startHeartbeat();
    let r: Round = { text: "", calls: new Map() }; // the round being written (its text is kept however it ends)
    try {
      if (first.overLimit) throw new UsageLimitError(first.overLimit);
      if (attached.refusal) throw new AppError(attached.refusal, 422);
      for (let round = 0, refits = 0; ; round++) {
        r = { text: "", calls: new Map() };
        const offered = tools && round < 3 ? tools : undefined;
        try {
          yield* this.streamRound(messages, offered, r);
        } catch (e) {
          // Pictures the server would not take, though the model was marked as seeing them: said, and not sent
          // to this server and model again for a while, so the thread's later turns are not refused for them too.
          if (attached.images.size && refusesFeature("images", e)) {
            rememberRefusal("images", conn, conn.chatModel);
            throw new AppError(picturesRefusedByServer(conn.chatModel), 422);
          }
          // A prompt longer than the model's context, refused before anything was answered: asked again at once
          // with less history (and memory) rather than failing the turn.
          const fresh = round === 0 && !r.text && !r.calls.size && refits < MAX_REFITS;
          const target = fresh ? refitAfterRefusal(e, conn, conn.chatModel, promptTokens(messages, offered)) : null;
          if (target === null) throw e;
          refits++;
          ({ ctx, recalled, attached } = await this.readContext(useMemory, target));
          messages = buildPrompt(ctx, memoryBlock(recalled), this.system, instructions, attached);
          round--;
          continue;
        }
        if (!r.calls.size) break;
        const next = await this.runTools(r);
        for (const ev of next.events) yield ev;
        messages = [...messages, ...next.messages];
        r = { text: "", calls: new Map() };
      }
      const { final, uses } = await this.complete(r.text, recalled, ctx, useMemory, attached);
      yield { type: "done", item: final, ...uses };
      return final;
    } catch (e) {
      const ev = await this.fail(e, r.text);
      yield ev;
      return ev.item ?? undefined;
    } finally {
      clearInterval(this.heartbeat);
      running.delete(this.assistant.id);
      await this.charge(); // if the answer ended without reporting (a database outage)
    }
  }

  /** Step 2: the window, recall and the usage check, read as one statement (lib/db/function-calls.ts). */
  private async readContext(useMemory: boolean, promptLimit: number | null) {
    const { db, p } = this;
    const config = getConfig();
    const budgets = fittedBudgets(
      promptLimit,
      { memory: useMemory ? config.memory.tokenBudget : 0, history: config.chat.historyTokenBudget },
      promptLimit === null ? 0 : this.fixedPromptTokens(useMemory),
    );
    const memBudget = budgets.memory;
    this.historyBudget = budgets.history;
    // No lease renewal here: until the heartbeat's first one, the sweeper measures the answer's lease from its
    // updatedAt, which the append just set (an UPDATE beside the reads was a round trip of its own on PGlite).
    // The early vector: the exact search's reads need its model; pgvector's go out with its search (stop 42, 54).
    const early = useMemory && this.early?.text === p.userItem.content ? this.early : undefined;
    const hold = early && (await searchWaitsForVector(db)) ? early.vector : undefined;
    const own = useMemory ? await this.own : null;
    const [ctx, recalled, overLimit, files] = await readTogetherAfter(hold, () =>
      Promise.all([
        loadContext(db, p.threadId, p.assistant.parentId ?? p.userItem.id, {
          cipher: this.c,
          budget: budgets.history,
        }).then((c) => (turnStep("reads"), c)),
        recallForAnswer(this.u, p.userItem.content, {
          budget: useMemory ? memBudget : 0,
          threadId: p.threadId,
          // The summary is of general memory: not for a project that sees its own memories only.
          about: this.u.scope.general ? p.meta.aboutSummary : null,
          vector: early?.vector,
          vectorModel: early?.model,
          own,
        }),
        checkLimits(db, this.u.actorId),
        p.hasAttachments ? threadAttachmentRows(db, p.threadId) : [],
      ]),
    );
    turnStep("context");
    // A prompt asked again after a refusal had left the box too: both count as sent.
    this.sentMemoryIds = [...new Set([...this.sentMemoryIds, ...recalled.memories.map((m) => m.id)])];
    // The thread's documents (whole, or the passages nearest the question) and the window's pictures.
    const attached = await attachmentsForAnswer(db, this.c, files, {
      conn: p.conn,
      windowItemIds: ctx.window.map((i) => i.id),
      question: p.userItem.content,
      questionItemId: p.userItem.id,
      promptLimit,
    });
    return { ctx, recalled, overLimit, attached };
  }

  /** What every prompt of this thread sends besides history and memory: the instructions and the memory tools. */
  private fixedPromptTokens(useMemory: boolean): number {
    const instructions = this.p.meta.project?.instructions ?? "";
    return (
      countTokens(this.system) +
      countTokens(instructions) +
      (useMemory ? promptTokens([], MEMORY_TOOLS) : 0) +
      MESSAGE_OVERHEAD
    );
  }

  /** The lease says this instance is still writing; a crash lets it run out (lib/chat/leases.ts). */
  private startHeartbeat() {
    this.heartbeat = setInterval(() => {
      const id = this.assistant.id;
      void renewLease(this.db, id)
        .then((alive) => {
          if (!alive && this.assistant.id === id) this.abort.abort(); // stopped from another instance
        })
        .catch(() => undefined);
    }, RENEW_MS);
  }

  /** Step 3: one model call, streamed; the text and tool calls land in `r`. A silent stream fails after a while. */
  private async *streamRound(messages: Message[], tools: typeof MEMORY_TOOLS | undefined, r: Round) {
    const stall = new AbortController();
    let stalled: ModelIdleError | null = null;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        stalled = new ModelIdleError(getConfig().chat.modelIdleTimeoutSeconds);
        stall.abort();
      }, idleTimeoutMs());
    };
    const flusher = partialSaver(this.db, this.c, () => this.assistant.id, this.abort);
    armIdle();
    this.modelCalls++;
    const reportedBefore = this.usage.prompt;
    const { conn } = this.p;
    try {
      // A model its server serves without tool calling (Ollama: "does not support tools") answers without the
      // memory tools: recall still goes in, and learning still runs after the answer (lib/llm/server-quirks.ts).
      // A server refusing `stream_options` answers without usage, as servers that never report it do.
      const optional: Feature[] = tools ? ["tools", "streamUsage"] : ["streamUsage"];
      turnStep("request");
      const stream = await withoutRefused(conn, conn.chatModel, optional, (use) =>
        openaiClient(conn).chat.completions.create(
          {
            model: conn.chatModel,
            messages,
            stream: true,
            ...(use.has("streamUsage") ? { stream_options: { include_usage: true } } : {}),
            ...(use.has("tools") ? { tools } : {}),
          },
          // No automatic retry: a failed answer is shown at once, with a Retry button.
          { signal: AbortSignal.any([this.abort.signal, stall.signal]), maxRetries: 0 },
        ),
      ).catch((e) => {
        throw stalled ?? e;
      });
      // A reasoning model's leading <think> block is not the answer (lib/llm/model-reply.ts).
      const reasoning = new LeadingReasoningFilter();
      for await (const chunk of stream) {
        armIdle();
        const delta = reasoning.push(takeChunk(chunk, r, this.usage) ?? "");
        if (delta) {
          r.text += delta;
          yield { type: "delta", text: delta } satisfies TurnEvent;
          flusher.maybe(r.text);
        }
      }
      const held = reasoning.end();
      if (held) {
        r.text += held;
        yield { type: "delta", text: held } satisfies TurnEvent;
      }
      if (reasoning.thought && !r.text.trim() && !r.calls.size && !this.abort.signal.aborted)
        throw new OnlyThinkingError();
    } catch (e) {
      throw stalled && !this.abort.signal.aborted ? stalled : e;
    } finally {
      clearTimeout(idle);
    }
    await flusher.done();
    this.checkPromptRead(messages, tools, reportedBefore);
    if (this.abort.signal.aborted) throw new OpenAI.APIUserAbortError();
    if (stall.signal.aborted) throw new ModelIdleError(getConfig().chat.modelIdleTimeoutSeconds);
  }

  /**
   * Whether the server read the whole prompt of the round just streamed: one that reports far fewer prompt tokens
   * than were sent cut it (Ollama drops the start, where the instructions and memories are). The answer says so,
   * and later turns are fitted within what it read (lib/llm/prompt-limits.ts).
   */
  private checkPromptRead(messages: Message[], tools: typeof MEMORY_TOOLS | undefined, reportedBefore: number) {
    const reported = this.usage.prompt - reportedBefore;
    if (!reported) return;
    const sent = promptTokens(messages, tools);
    const { conn } = this.p;
    if (noteReportedPrompt(conn, conn.chatModel, sent, reported)) this.promptCut = { sent, reported };
  }

  /**
   * Step 4, a tool round: keep the calls on this answer item, save each result, and continue in a new answer
   * item below them. Returns the events to show and the messages the next round adds.
   */
  private async runTools(r: Round): Promise<{ events: TurnEvent[]; messages: Message[] }> {
    const { db, c, p } = this;
    const toolCalls: ToolCall[] = [...r.calls.values()].map((t, i) => ({ ...t, id: t.id || `call_${i}` }));
    await db.item.update({
      where: { id: this.assistant.id },
      data: {
        content: c.seal(r.text),
        searchTokens: c.searchTokens(r.text),
        toolCalls: sealJson(c, toolCalls),
        status: "complete",
        tokens: messageTokens(r.text, JSON.stringify(toolCalls)),
      },
    });
    const results: NewItem[] = [];
    const toolCtx = chatToolCaller(this.u, {
      threadId: p.threadId,
      itemId: p.userItem.id,
      userMessage: p.userItem.content,
      paused: p.meta.memoryPaused,
      // What a search showed the model left the box with this answer, as recalled memories do.
      sent: async (ids) => void (this.sentMemoryIds = [...new Set([...this.sentMemoryIds, ...ids])]),
    });
    for (const t of toolCalls) {
      const out = await runMemoryTool(toolCtx, t.name, t.arguments);
      results.push({ role: "tool", content: out.result, toolCallId: t.id, toolName: t.name });
    }
    const added = await appendItems(
      db,
      p.threadId,
      [...results, { role: "assistant", status: "streaming", model: p.conn.chatModel }],
      { parent: this.assistant.id, cipher: c },
    );
    running.delete(this.assistant.id);
    const next = added[added.length - 1];
    await renewLease(db, next.id).catch(() => undefined);
    this.assistant = next;
    trackGeneration(next.id, this.u.actorId, this.abort);
    const events: TurnEvent[] = toolCalls.map((t, i) => ({
      type: "tool",
      name: t.name,
      result: results[i].content ?? "",
      assistantItemId: next.id,
    }));
    return { events, messages: toolMessages(r.text, toolCalls, results) };
  }

  /** Step 5: save the answer, record which memories it was given and drew on, and queue the work after it. */
  private async complete(
    text: string,
    recalled: Recall,
    ctx: Context,
    useMemory: boolean,
    attached: TurnAttachments,
  ): Promise<{ final: SessionItem; uses: MemoryUses }> {
    const { db, p } = this;
    const final = await finishRetrying(db, this.c, this.assistant.id, {
      sources: passagesUsed(text, p.userItem.content, attached.given),
      content: text,
      status: "complete",
      promptTokens: this.usage.any ? this.usage.prompt : null,
      completionTokens: this.usage.any ? this.usage.completion : null,
      // On a complete answer, `error` is a warning about it.
      ...(this.promptCut ? { error: promptCutNotice(this.promptCut) } : {}),
    });
    // "No, I meant…" / "don't use bullet points": feedback on the answer before this message.
    if (useMemory && !p.meta.memoryPaused) {
      await recordCorrection(this.u, { ...p.userItem, threadId: p.threadId }).catch((e) =>
        logBrief(`could not record a correction for ${p.userItem.id}`, e),
      );
    }
    const calls = this.modelCalls;
    this.modelCalls = 0; // charged here, not again when the turn ends
    const uses = await settleAnswer(this.u, {
      ...this.chargeOf(calls),
      threadId: p.threadId,
      userItemId: p.userItem.id,
      answerId: final.id,
      question: p.userItem.content,
      answerText: text,
      recalled,
      useMemory,
      learn: useMemory && !p.meta.memoryPaused,
      firstExchange: p.firstExchange,
      summarize: ctx.unsummarized.length > 0 ? this.historyBudget : null,
    });
    return { final, uses };
  }

  /** How an answer that did not complete ends: stopped, failed with a sentence, or left to the sweeper. */
  private async fail(e: unknown, text: string): Promise<Extract<TurnEvent, { type: "done" | "error" }>> {
    clearInterval(this.heartbeat);
    const id = this.assistant.id;
    if (this.abort.signal.aborted || e instanceof OpenAI.APIUserAbortError) {
      const item = await finishRetrying(this.db, this.c, id, { content: text, status: "stopped" });
      await this.unfinished(id);
      return { type: "done", item, memoriesUsed: [], alsoGiven: [] };
    }
    // The answer cannot be saved now; its lease runs out and the sweeper marks it interrupted. (A refused connection
    // to the model server looks like one to the database underneath: it is the model server's failure, said at once.)
    const modelFailure = classifyModelFailure(e, this.p.conn.baseURL);
    if (!modelFailure && isDatabaseUnavailable(e)) throw e;
    const message =
      e instanceof ModelIdleError ||
      e instanceof OnlyThinkingError ||
      e instanceof UsageLimitError ||
      e instanceof AppError
        ? e.message
        : describeModelError(e, this.p.conn.baseURL, this.forAdmin);
    // A stream the model server cut keeps what came as interrupted (as on /v1); anything else failed.
    const status = modelFailure?.kind === "cut" && text ? "interrupted" : "failed";
    const item = await finishRetrying(this.db, this.c, id, { content: text, status, error: message });
    await this.unfinished(id);
    return { type: "error", message, item };
  }

  /**
   * The ledger counts what the model was asked, however the answer ended (lib/account/usage-ledger.ts);
   * before the last event, so the stream closes right after it.
   */
  /** An answer that did not complete: charged, and the question still gets its vector. */
  private async unfinished(answerId: string) {
    await this.charge();
    await settleUnfinished(this.u, { useMemory: !this.p.meta.temporary, conn: this.p.conn, answerId });
  }

  private async charge() {
    const calls = this.modelCalls;
    this.modelCalls = 0;
    await chargeAnswer(this.u, this.chargeOf(calls));
  }

  private chargeOf(modelCalls: number): AnswerCharge {
    return {
      client: "web",
      conn: this.p.conn,
      model: this.p.conn.chatModel,
      sentMemoryIds: this.sentMemoryIds,
      modelCalls,
      tokens: this.usage.prompt + this.usage.completion,
    };
  }
}

/** How many times a turn is asked again with a smaller prompt after the server refused one as too long. */
const MAX_REFITS = 3;

const logBrief = (what: string, e: unknown) =>
  console.error(`[mnemo] ${what}: ${(e as Error).message.split("\n").slice(-1)[0]}`);
