// POST /v1/chat/completions for other tools: any `openai` client, Open WebUI or LibreChat can use Mnemo as its
// model server and get the user's memory. The client sends its whole `messages` array, as OpenAI clients do; Mnemo
// adds the memory block (recalled for the last user message, in the key's project scope), forwards the request to
// the configured model with the client's tools, and answers in OpenAI's format, streamed or not.
//
// The exchange is kept in a thread the web app lists as "via <key name>". A client conversation is recognised by
// a hash of the key, the request's `user` field and the conversation's first user message: every follow-up an
// OpenAI client sends starts with the same messages, so it continues the same thread; a new first message starts
// a new one. Only what is new is stored (the last user message and the answer). Learning follows the app's rules
// (pause, review, the usage ledger and daily limits).
//
// The client's messages are its own and go as they are; the memory block Mnemo adds is fitted to what the model server
// reads (lib/llm/prompt-limits.ts): within a known limit at once, and after a refusal for length asked again once
// with the block made to fit. A server that cuts prompts silently is learned from the usage it reports.
import crypto from "node:crypto";
import type OpenAI from "openai";
import { z } from "zod";
import { AppError, NotFoundError } from "@/lib/errors";
import { forModel, resolveConnectionCached, type ModelConnection } from "@/lib/llm/connection";
import { modelForClient } from "@/lib/llm/models";
import { openaiClient } from "@/lib/llm/client";
import { knownPromptLimit, noteReportedPrompt, promptTokens } from "@/lib/llm/prompt-limits";
import { checkLimits } from "@/lib/account/usage-limits";
import { settleAnswer } from "@/lib/answer/settle";
import { recallForAnswer, refitAfterRefusal } from "@/lib/answer/fit";
import { ownMemoryContext, sharedProjectMode } from "@/lib/projects/own-memory";
import { getConfig } from "@/lib/config";
import { memoryBlock, type Recall } from "@/lib/memory/recall";
import { stripCitations } from "@/lib/memory/citation-format";
import { appendItems, type NewItem } from "@/lib/memory/session";
import { provisionalTitle } from "@/lib/chat/titles";
import type { KeyCaller } from "@/lib/keys/api-keys";
import { inMemoryScope, type UserContext } from "@/lib/user-context";
import { isLocalEndpoint } from "@/lib/memory/disclosure";
import { withoutReasoning } from "@/lib/llm/model-reply";
import { withoutRefused } from "@/lib/llm/server-quirks";
import { fromModelServer } from "@/lib/llm/model-failure";
import { storedMessageText } from "@/lib/chat/stored-message";
import { cutGraphemes } from "@/lib/text/policy";
import { completionInput, FORWARDED, messageSchema, type CompletionInput } from "./completion-input";

export { completionInput, type CompletionInput };

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

const textOf = (m: z.infer<typeof messageSchema>) =>
  typeof m.content === "string"
    ? m.content
    : (m.content ?? []).map((p) => (p.type === "text" && typeof p.text === "string" ? p.text : "")).join("");

/**
 * A request that continues a thread the client named (the Responses API's previous response or conversation): the new
 * items it brings are stored under `parent` (undefined: the thread's active leaf). Without a thread, it is found by the
 * conversation's opening message, as OpenAI chat clients resend it. The answer gets `answerId` when given.
 */
export type ThreadBinding = { threadId?: string; parent?: string | null; items: NewItem[]; answerId?: string };

/** What one request did, for its answer and for storing it. */
type Exchange = {
  /** The answer's id, chosen ahead (ThreadBinding). */
  answerId?: string;
  /** The key's user in its scope, private memories allowed only for a local model server. */
  u: UserContext;
  threadId: string;
  question: string | null;
  userItemId: string | null;
  /** What memory was recalled for (the last thing the user said). */
  ask: string;
  recalled: Recall;
  messages: Msg[];
  /** The prompt's size as Mnemo counts it (messages with the memory block, tools). */
  sent: number;
  model: string;
  conn: ModelConnection;
};

/** The thread of this client conversation (made on its first request), and the request's new user message stored. */
async function prepare(caller: KeyCaller, input: CompletionInput, binding?: ThreadBinding): Promise<Exchange> {
  const state = await resolveConnectionCached(caller.u.db);
  if (!state.configured) throw new AppError(state.reason, 409);
  // The model the client named, from the admin's list (an unknown one: OpenAI's 404), before anything is stored.
  const conn = forModel(state.connection, modelForClient(state.models, input.model));
  const u = inMemoryScope(caller.u, { ...caller.u.scope, privateOk: isLocalEndpoint(conn.baseURL) });
  const over = await checkLimits(u.db, u.actorId);
  if (over) throw new AppError(over, 429);
  const users = input.messages.filter((m) => m.role === "user");
  const last = input.messages.at(-1)!;
  const question = last.role === "user" ? textOf(last) : null;
  const opening = users[0] ? textOf(users[0]) : textOf(input.messages[0]);
  const clientRef = crypto
    .createHash("sha256")
    .update(`${caller.keyId}\u0000${input.user ?? ""}\u0000${opening}`)
    .digest("hex");
  const { threadId, userItemId } = binding?.threadId
    ? await storeBound(u, binding.threadId, binding)
    : await storeQuestion(u, await clientThread(caller, clientRef, opening), question);
  // Memory for the last thing the user said (a tool round's follow-up recalls for the same question again).
  const ask = recallText(question ?? (users.length ? textOf(users.at(-1)!) : ""));
  const x = { u, threadId, question, userItemId, ask, model: conn.chatModel, conn, answerId: binding?.answerId };
  return withRecall(x, input, memoryBudget(knownPromptLimit(conn, conn.chatModel), input));
}

async function storeQuestion(u: UserContext, threadId: string, question: string | null) {
  if (!question) return { threadId, userItemId: null };
  const [item] = await appendItems(u.db, threadId, [{ role: "user", content: storedQuestion(question) }], {
    cipher: u.cipher,
    as: u,
  });
  return { threadId, userItemId: item?.id ?? null };
}

/** The bound thread's new items, stored in one append; the last user message among them is the question's item. */
async function storeBound(u: UserContext, threadId: string, b: ThreadBinding) {
  const items = b.items.map((i) => (i.role === "user" ? { ...i, content: storedQuestion(i.content ?? "") } : i));
  const stored = await appendItems(u.db, threadId, items, { cipher: u.cipher, as: u, parent: b.parent });
  if (items.length && !stored.length) throw new NotFoundError("thread");
  return { threadId, userItemId: stored.findLast((i) => i.role === "user")?.id ?? null };
}

/**
 * The thread keeps at most this much of a client's message (as an import does): the model gets it whole, but one
 * pasted book should not fill every later context window or the database.
 */
const storedQuestion = (q: string) => storedMessageText(q, "when stored");

/**
 * What memory is recalled for: the message, or of a longer one (a pasted document and a question about it) its start
 * and its end, as long as a message typed in the app may be. Searching megabytes of words costs seconds.
 */
function recallText(text: string): string {
  const max = getConfig().chat.maxMessageChars;
  if (text.length <= max) return text;
  const head = cutGraphemes(text, Math.floor(max * 0.6));
  let from = text.length - (max - head.length);
  if (/[\uDC00-\uDFFF]/.test(text[from])) from++; // not half of a character
  return `${head}\n${text.slice(from)}`;
}

/** Smaller than this, a memory block holds too little to be worth sending. */
const MIN_MEMORY_TOKENS = 50;

/**
 * The memory block's budget beside the client's messages: the configured one, or within what the server is known to
 * read (at most a quarter of it, and never more than the client's own messages leave).
 */
function memoryBudget(limit: number | null, input: CompletionInput): number {
  const budget = getConfig().memory.tokenBudget;
  if (limit === null) return budget;
  const client = promptTokens(input.messages, input.tools);
  const room = Math.floor(Math.min(budget, limit / 4, limit - client));
  return room >= MIN_MEMORY_TOKENS ? room : 0;
}

async function withRecall(
  x: Omit<Exchange, "recalled" | "messages" | "sent">,
  input: CompletionInput,
  budget: number,
): Promise<Exchange> {
  // A member's own memory helps their own answers in a shared project whose mode says so (lib/projects/own-memory.ts).
  const own = budget > 0 ? await ownMemoryContext(x.u, await sharedProjectMode(x.u)) : null;
  const recalled = await recallForAnswer(x.u, x.ask, { budget, threadId: x.threadId, own });
  const messages = withMemory(input, memoryBlock(recalled));
  return { ...x, recalled, messages, sent: promptTokens(messages, input.tools) };
}

/**
 * Calls the model server with the exchange; a refusal for length when Mnemo's memory block is in the prompt is asked
 * again once, the block fitted to what the server reads (and that size kept for later requests). Without a block,
 * or refused again, the client gets the server's refusal: its own messages are too long.
 */
async function withinContext<T>(
  x: Exchange,
  input: CompletionInput,
  call: (x: Exchange) => Promise<T>,
): Promise<{ x: Exchange; result: T }> {
  try {
    return { x, result: await call(x) };
  } catch (e) {
    const limit = x.recalled.tokens ? refitAfterRefusal(e, x.conn, x.model, x.sent) : null;
    if (limit === null) throw e;
    const fitted = await withRecall(x, input, memoryBudget(limit, input));
    return { x: fitted, result: await call(fitted) };
  }
}

/** The thread a client conversation continues, or a new one (two first requests at once make one thread). */
async function clientThread(caller: KeyCaller, clientRef: string, opening: string): Promise<string> {
  const { u } = caller;
  const found = await u.db.thread.findUnique({ where: { userId_clientRef: { userId: u.userId, clientRef } } });
  if (found) return found.id;
  try {
    const made = await u.db.thread.create({
      data: {
        userId: u.userId,
        authorId: u.actorId !== u.userId ? u.actorId : null,
        clientRef,
        apiKeyId: caller.keyId,
        projectId: u.scope.projectId,
        title: u.cipher.seal(provisionalTitle(opening || "Conversation")),
      },
    });
    return made.id;
  } catch (e) {
    if ((e as { code?: string })?.code !== "P2002") throw e;
    return (await u.db.thread.findUniqueOrThrow({ where: { userId_clientRef: { userId: u.userId, clientRef } } })).id;
  }
}

/**
 * The client's messages with the memory block after its own leading system messages: added to the last of them
 * when it is text (many open models' chat templates refuse a second system message), else as one of its own.
 */
function withMemory(input: CompletionInput, block: string | null): Msg[] {
  const messages = input.messages as unknown as Msg[];
  if (!block) return messages;
  const lead = messages.findIndex((m) => m.role !== "system" && m.role !== "developer");
  const at = lead < 0 ? messages.length : lead;
  const last = messages[at - 1];
  if (last && typeof last.content === "string")
    return [
      ...messages.slice(0, at - 1),
      { ...last, content: `${last.content}\n\n${block}` } as Msg,
      ...messages.slice(at),
    ];
  return [...messages.slice(0, at), { role: "system", content: block }, ...messages.slice(at)];
}

function upstreamRequest(input: CompletionInput, x: Exchange) {
  return {
    model: x.model,
    messages: x.messages,
    ...(input.tools ? { tools: input.tools as unknown as OpenAI.Chat.Completions.ChatCompletionTool[] } : {}),
    ...(input.tool_choice !== undefined
      ? { tool_choice: input.tool_choice as OpenAI.Chat.Completions.ChatCompletionToolChoiceOption }
      : {}),
    ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
    ...(input.top_p !== undefined ? { top_p: input.top_p } : {}),
    ...(input.max_tokens !== undefined ? { max_tokens: input.max_tokens } : {}),
    ...(input.max_completion_tokens !== undefined ? { max_completion_tokens: input.max_completion_tokens } : {}),
    ...(input.stop !== undefined ? { stop: input.stop } : {}),
    ...Object.fromEntries(FORWARDED.filter((k) => input[k] !== undefined).map((k) => [k, input[k]])),
  };
}

type ToolCall = { id: string; name: string; arguments: string };
type Answer = {
  text: string;
  toolCalls: ToolCall[];
  usage: { prompt: number; completion: number } | null;
  /** The stream ended before the model finished (the server cut it, or the client went away): kept as interrupted. */
  interrupted?: boolean;
};

/** Stores the answer, records which memories it was given and drew on, charges the ledger, queues learning. */
async function finish(caller: KeyCaller, x: Exchange, a: Answer): Promise<void> {
  const { u } = caller;
  // A server that read less than was sent cut it: later requests get a memory block that fits (the client is not told:
  // the API has no place for it, and the usage it gets shows the count).
  if (a.usage) noteReportedPrompt(x.conn, x.model, x.sent, a.usage.prompt);
  // A reasoning model's thinking is passed through to the caller as the server sent it, but not kept or learned from.
  const said = withoutReasoning(a.text);
  // The client has the whole answer; the thread keeps as much of it as of a client's message.
  const text = storedMessageText(stripCitations(said), "when stored");
  const [answer] = await appendItems(
    u.db,
    x.threadId,
    [
      {
        id: x.answerId,
        role: "assistant",
        content: text,
        toolCalls: a.toolCalls.length ? a.toolCalls : undefined,
        model: x.model,
        promptTokens: a.usage?.prompt,
        completionTokens: a.usage?.completion,
        ...(a.interrupted ? { status: "interrupted" as const } : {}),
      },
    ],
    { cipher: u.cipher, as: u },
  );
  if (!answer) return; // the thread was deleted meanwhile
  // Learning writes memory: only for a key that may (docs/api.md, the scope table), and not while the user paused it;
  // never from half an answer.
  const learn = !a.interrupted && caller.scopes.includes("memory:write") && !(await u.settings()).paused;
  await settleAnswer(u, {
    client: "api",
    apiKeyId: caller.keyId,
    conn: x.conn,
    model: x.model,
    sentMemoryIds: x.recalled.memories.map((m) => m.id),
    modelCalls: 1,
    tokens: (a.usage?.prompt ?? 0) + (a.usage?.completion ?? 0),
    threadId: x.threadId,
    userItemId: x.userItemId,
    answerId: answer.id,
    question: x.question ?? "",
    answerText: said,
    recalled: x.recalled,
    useMemory: true,
    learn,
  });
}

const completionId = () => `chatcmpl-${crypto.randomBytes(12).toString("hex")}`;

/** A non-streaming answer, as OpenAI's chat.completion. */
export async function completeOnce(
  caller: KeyCaller,
  input: CompletionInput,
  binding?: ThreadBinding,
): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  const { x, result: r } = await withinContext(await prepare(caller, input, binding), input, (x) =>
    openaiClient(x.conn)
      .chat.completions.create({ ...upstreamRequest(input, x), stream: false })
      .catch(fromModelServer(x.conn.baseURL)),
  );
  const choice = r.choices[0];
  const toolCalls = (choice?.message.tool_calls ?? []).flatMap((t) =>
    t.type === "function" ? [{ id: t.id, name: t.function.name, arguments: t.function.arguments }] : [],
  );
  const answer: Answer = {
    text: choice?.message.content ?? "",
    toolCalls,
    usage: r.usage ? { prompt: r.usage.prompt_tokens, completion: r.usage.completion_tokens } : null,
  };
  await finish(caller, x, answer);
  return {
    id: completionId(),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: x.model,
    // Every choice the server gave (n > 1); the thread keeps the first, the answer Mnemo learns from.
    choices: r.choices.map((c, index) => ({
      index,
      message: {
        role: "assistant" as const,
        content: stripCitations(c.message.content ?? ""),
        refusal: c.message.refusal ?? null,
        ...(c.message.tool_calls?.length ? { tool_calls: c.message.tool_calls } : {}),
      },
      finish_reason: c.finish_reason ?? "stop",
      logprobs: c.logprobs ?? null,
    })),
    ...(r.usage ? { usage: r.usage } : {}),
  };
}

/** A streamed answer, as OpenAI's chat.completion.chunk events (then the exchange is stored). */
export async function completeStreaming(
  caller: KeyCaller,
  input: CompletionInput,
  binding?: ThreadBinding,
): Promise<AsyncGenerator<Chunk>> {
  // A server refusing `stream_options` answers without usage (lib/llm/server-quirks.ts).
  const { x, result: upstream } = await withinContext(await prepare(caller, input, binding), input, (x) =>
    withoutRefused(x.conn, x.model, ["streamUsage"], (use) =>
      openaiClient(x.conn)
        .chat.completions.create({
          ...upstreamRequest(input, x),
          stream: true,
          ...(use.has("streamUsage") ? { stream_options: { include_usage: true } } : {}),
        })
        .catch(fromModelServer(x.conn.baseURL)),
    ),
  );
  const wantUsage = !!input.stream_options?.include_usage;
  return (async function* () {
    const id = completionId();
    const created = Math.floor(Date.now() / 1000);
    const answer: Answer = { text: "", toolCalls: [], usage: null };
    const calls = new Map<number, ToolCall>();
    let shown = 0; // characters of the answer (citations removed) already sent
    let ended = false; // the model's stream ran to its end
    try {
      for await (const chunk of upstream) {
        if (chunk.usage)
          answer.usage = { prompt: chunk.usage.prompt_tokens, completion: chunk.usage.completion_tokens };
        const choice = chunk.choices[0];
        if (!choice) {
          if (chunk.usage && wantUsage)
            yield { id, object: "chat.completion.chunk", created, model: x.model, choices: [], usage: chunk.usage };
          continue;
        }
        const delta = { ...choice.delta };
        if (typeof delta.content === "string") {
          answer.text += delta.content;
          const visible = stripCitations(answer.text, true);
          delta.content = visible.slice(shown);
          shown = Math.max(shown, visible.length);
        }
        for (const t of delta.tool_calls ?? []) {
          const c = calls.get(t.index) ?? { id: "", name: "", arguments: "" };
          calls.set(t.index, {
            id: t.id ?? c.id,
            name: c.name + (t.function?.name ?? ""),
            arguments: c.arguments + (t.function?.arguments ?? ""),
          });
        }
        yield { id, object: "chat.completion.chunk", created, model: x.model, choices: [{ ...choice, delta }] };
      }
      ended = true;
    } catch (e) {
      fromModelServer(x.conn.baseURL)(e); // a stream the server cut is its failure, said as such (lib/api/v1-route.ts)
    } finally {
      // The server cut the stream, or the client went away (the generator is closed early): what came is kept, as
      // interrupted, never as a complete answer.
      answer.interrupted = !ended;
      answer.toolCalls = [...calls.values()];
      await finish(caller, x, answer).catch((e) =>
        console.error(`[mnemo] /v1 answer not stored: ${(e as Error).message}`),
      );
    }
  })();
}
