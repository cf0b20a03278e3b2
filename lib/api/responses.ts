// The Responses API (/v1/responses), the OpenAI SDKs' and the Agents SDK's default, over the one /v1 answer core
// (lib/api/completions.ts): a request is translated to chat completions for the configured model server, with
// Mnemo's memory block, learning, usage and "what left the box" exactly as /v1/chat/completions has them; the answer
// is stored in a thread "via <key name>". A response's id is its answer's item id (`resp_<uuid>`), so
// `previous_response_id` continues that thread from that answer, and `conversation` (lib/api/conversations.ts) a
// conversation's thread. Tools: functions only (hosted tools need OpenAI's own servers).
import crypto from "node:crypto";
import { z } from "zod";
import type OpenAI from "openai";
import type { KeyCaller } from "@/lib/keys/api-keys";
import { AppError, NotFoundError } from "@/lib/errors";
import { pathItems, type SessionItem } from "@/lib/memory/session";
import { completeOnce, completeStreaming, completionInput, type ThreadBinding } from "./completions";
import { inputItem, storedToChat, toChatMessages, toNewItem, type InputItem } from "./response-items";
import { conversationThread } from "./conversations";
import { present } from "./nullable";

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const functionTool = z
  .object({
    type: z.string().max(40),
    name: z.string().min(1).max(64).optional(),
    description: z.string().max(4000).nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  })
  .passthrough();

const textFormat = z
  .object({
    type: z.enum(["text", "json_object", "json_schema"]),
    name: z.string().max(64).optional(),
    description: z.string().max(4000).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  })
  .passthrough();

export const responseInput = z
  .object({
    model: z.string().max(200).nullish(),
    input: z.union([z.string(), z.array(inputItem).max(2000)]).nullish(),
    instructions: z.string().max(200_000).nullish(),
    tools: z.array(functionTool).max(128).nullish(),
    tool_choice: z.unknown().optional(),
    previous_response_id: z.string().max(100).nullish(),
    conversation: z.union([z.string().max(100), z.object({ id: z.string().max(100) }).passthrough()]).nullish(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    background: z.boolean().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    max_output_tokens: z.number().int().min(1).max(1_000_000).nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    text: z.object({ format: textFormat.optional() }).passthrough().nullish(),
    reasoning: z
      .object({ effort: z.string().max(20).nullish() })
      .passthrough()
      .nullish(),
    user: z.string().max(200).nullish(),
    metadata: z.record(z.string(), z.string().max(512)).nullish(),
  })
  .passthrough()
  .transform(present);
export type ResponseInput = z.infer<typeof responseInput>;

export const responseId = (itemId: string) => `resp_${itemId}`;
const itemOf = (id: string) => {
  const m = /^resp_([0-9a-f-]{36})$/.exec(id);
  if (!m) throw new AppError(`No response ${id}.`, 404);
  return m[1];
};

/** The answer item of a response the key's user may read (a project key: only its project's). */
export async function ownedAnswer(caller: KeyCaller, id: string): Promise<{ threadId: string; itemId: string }> {
  const { u } = caller;
  const item = await u.db.item.findFirst({
    where: {
      id: itemOf(id),
      role: "assistant",
      thread: { userId: u.userId, ...(u.scope.projectId ? { projectId: u.scope.projectId } : {}) },
    },
    select: { id: true, threadId: true },
  });
  if (!item) throw new AppError(`No response ${id}.`, 404);
  return { threadId: item.threadId, itemId: item.id };
}

type Plan = { chat: ReturnType<typeof completionInput.parse>; binding: ThreadBinding; id: string };

/** The request as chat completions, and the thread it continues (previous response, conversation, or its own). */
async function plan(caller: KeyCaller, r: ResponseInput): Promise<Plan> {
  if (r.background)
    throw new AppError("background: Mnemo answers in the request; background responses are not supported.");
  const tools = (r.tools ?? []).map((t) => {
    if (t.type !== "function" || !t.name)
      throw new AppError(`tools: Mnemo runs function tools only, not "${t.type}" (a tool of OpenAI's own servers).`);
    return {
      type: "function" as const,
      function: {
        name: t.name,
        description: t.description ?? undefined,
        parameters: t.parameters ?? undefined,
        strict: t.strict ?? undefined,
      },
    };
  });
  const items: InputItem[] = typeof r.input === "string" ? [{ role: "user", content: r.input }] : (r.input ?? []);
  if (!items.length) throw new AppError("input: send at least one item.");
  const answerId = crypto.randomUUID();
  const conversation = typeof r.conversation === "string" ? r.conversation : r.conversation?.id;
  if (conversation && r.previous_response_id)
    throw new AppError("Send either previous_response_id or conversation, not both.");
  let history: SessionItem[] = [];
  let binding: ThreadBinding = { items: [], answerId };
  const { u } = caller;
  if (r.previous_response_id) {
    const prev = await ownedAnswer(caller, r.previous_response_id);
    history = await pathItems(u.db, prev.threadId, prev.itemId, 2000, u.cipher);
    binding = { threadId: prev.threadId, parent: prev.itemId, items: newItems(items), answerId };
  } else if (conversation) {
    const thread = await conversationThread(caller, conversation);
    history = await pathItems(u.db, thread.id, thread.activeLeafId, 2000, u.cipher);
    binding = { threadId: thread.id, items: newItems(items), answerId };
  }
  const messages = oneSystemMessage([
    ...(r.instructions ? [{ role: "system" as const, content: r.instructions }] : []),
    ...storedToChat(history.filter((i) => i.status !== "failed")),
    ...toChatMessages(items),
  ]);
  const format = r.text?.format;
  const chat = completionInput.parse({
    model: r.model,
    messages,
    stream: r.stream ?? false,
    ...(r.stream ? { stream_options: { include_usage: true } } : {}),
    ...(tools.length ? { tools } : {}),
    ...(r.tool_choice !== undefined ? { tool_choice: chatToolChoice(r.tool_choice) } : {}),
    temperature: r.temperature,
    top_p: r.top_p,
    max_completion_tokens: r.max_output_tokens,
    parallel_tool_calls: r.parallel_tool_calls,
    reasoning_effort: r.reasoning?.effort ?? undefined,
    user: r.user,
    ...(format && format.type !== "text" ? { response_format: chatFormat(format) } : {}),
  });
  return { chat, binding, id: responseId(answerId) };
}

/**
 * The instructions, a compaction's summary and any system or developer message, as one system message first: strict
 * chat templates (Mistral's, Gemma's) take one system message, at the start.
 */
function oneSystemMessage(messages: Msg[]): Msg[] {
  const system = messages.filter((m) => m.role === "system" || m.role === "developer");
  if (!system.length) return messages;
  const text = system
    .map((m) => (typeof m.content === "string" ? m.content : ""))
    .filter(Boolean)
    .join("\n\n");
  return [{ role: "system", content: text }, ...messages.filter((m) => m.role !== "system" && m.role !== "developer")];
}

const newItems = (items: InputItem[]) => items.map(toNewItem).filter((i) => i !== null);

function chatToolChoice(choice: unknown): unknown {
  if (choice && typeof choice === "object" && (choice as { type?: unknown }).type === "function")
    return { type: "function", function: { name: (choice as { name?: unknown }).name } };
  return choice;
}

function chatFormat(f: z.infer<typeof textFormat>) {
  if (f.type === "json_object") return { type: "json_object" as const };
  const schema = {
    name: f.name ?? "response",
    schema: f.schema,
    strict: f.strict ?? undefined,
    description: f.description,
  };
  return { type: "json_schema" as const, json_schema: schema };
}

type ToolCall = { id: string; name: string; arguments: string };
type Outcome = {
  text: string;
  toolCalls: ToolCall[];
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  status: "completed" | "incomplete" | "in_progress";
};

/** OpenAI's Response object for an answer. */
export function responseObject(id: string, r: Partial<ResponseInput>, o: Outcome, model: string, created = Date.now()) {
  const uuid = id.slice("resp_".length);
  const output: object[] = [];
  if (o.text || !o.toolCalls.length)
    output.push({
      type: "message",
      id: `msg_${uuid}`,
      status: o.status === "in_progress" ? "in_progress" : "completed",
      role: "assistant",
      content: o.status === "in_progress" ? [] : [{ type: "output_text", text: o.text, annotations: [], logprobs: [] }],
    });
  for (const c of o.toolCalls)
    output.push({
      type: "function_call",
      id: `fc_${uuid}`,
      call_id: c.id,
      name: c.name,
      arguments: c.arguments,
      status: "completed",
    });
  const usage = o.usage && {
    input_tokens: o.usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: o.usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: o.usage.prompt_tokens + o.usage.completion_tokens,
  };
  return {
    id,
    object: "response" as const,
    created_at: Math.floor(created / 1000),
    status: o.status,
    error: null,
    incomplete_details: o.status === "incomplete" ? { reason: "interrupted" } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model,
    output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: null },
    store: r.store ?? true,
    temperature: r.temperature ?? null,
    text: { format: r.text?.format ?? { type: "text" } },
    tool_choice: r.tool_choice ?? "auto",
    tools: r.tools ?? [],
    top_p: r.top_p ?? null,
    truncation: "disabled",
    usage: usage ?? null,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}

/** POST /v1/responses without stream. */
export async function createResponse(caller: KeyCaller, r: ResponseInput) {
  const p = await plan(caller, r);
  const done = await completeOnce(caller, p.chat, p.binding);
  const choice = done.choices[0];
  const toolCalls = (choice?.message.tool_calls ?? []).flatMap((t) =>
    t.type === "function" ? [{ id: t.id, name: t.function.name, arguments: t.function.arguments }] : [],
  );
  const usage = done.usage
    ? { prompt_tokens: done.usage.prompt_tokens, completion_tokens: done.usage.completion_tokens }
    : null;
  const status = choice?.finish_reason === "length" ? "incomplete" : "completed";
  return responseObject(p.id, r, { text: choice?.message.content ?? "", toolCalls, usage, status }, done.model);
}

/** POST /v1/responses with stream: OpenAI's event sequence, from the chat completion chunks. */
export async function createResponseStream(caller: KeyCaller, r: ResponseInput): Promise<AsyncGenerator<object>> {
  const p = await plan(caller, r);
  const chunks = await completeStreaming(caller, p.chat, p.binding);
  const events = new ResponseEvents(p.id, r);
  return (async function* () {
    yield* events.start();
    for await (const chunk of chunks) yield* events.chunk(chunk);
    yield* events.end();
  })();
}

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

/** The Responses stream's events for one answer: its text as it comes, its function calls and the final response. */
class ResponseEvents {
  private seq = 0;
  private model = "";
  private opened = false;
  private readonly created = Date.now();
  private readonly o: Outcome = { text: "", toolCalls: [], usage: null, status: "in_progress" };
  private readonly calls = new Map<number, ToolCall>();
  private readonly msgId: string;
  private readonly at = { output_index: 0, content_index: 0 };

  constructor(
    private readonly id: string,
    private readonly r: ResponseInput,
  ) {
    this.msgId = `msg_${id.slice("resp_".length)}`;
  }

  private ev(type: string, body: object) {
    return { type, sequence_number: this.seq++, ...body };
  }

  private response() {
    return responseObject(this.id, this.r, this.o, this.model, this.created);
  }

  *start() {
    yield this.ev("response.created", { response: this.response() });
    yield this.ev("response.in_progress", { response: this.response() });
  }

  *chunk(chunk: Chunk) {
    this.model = chunk.model || this.model;
    if (chunk.usage)
      this.o.usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens };
    const delta = chunk.choices[0]?.delta;
    for (const t of delta?.tool_calls ?? []) {
      const c = this.calls.get(t.index) ?? { id: "", name: "", arguments: "" };
      const name = c.name + (t.function?.name ?? "");
      this.calls.set(t.index, { id: t.id ?? c.id, name, arguments: c.arguments + (t.function?.arguments ?? "") });
    }
    if (!delta?.content) return;
    if (!this.opened) {
      this.opened = true;
      const item = { type: "message", id: this.msgId, status: "in_progress", role: "assistant", content: [] };
      yield this.ev("response.output_item.added", { output_index: 0, item });
      const part = { type: "output_text", text: "", annotations: [] };
      yield this.ev("response.content_part.added", { item_id: this.msgId, ...this.at, part });
    }
    this.o.text += delta.content;
    yield this.ev("response.output_text.delta", {
      item_id: this.msgId,
      ...this.at,
      delta: delta.content,
      logprobs: [],
    });
  }

  *end() {
    this.o.toolCalls = [...this.calls.values()];
    this.o.status = "completed";
    const final = this.response();
    if (this.opened) {
      const text = this.o.text;
      yield this.ev("response.output_text.done", { item_id: this.msgId, ...this.at, text, logprobs: [] });
      const part = { type: "output_text", text, annotations: [], logprobs: [] };
      yield this.ev("response.content_part.done", { item_id: this.msgId, ...this.at, part });
      yield this.ev("response.output_item.done", { output_index: 0, item: final.output[0] });
    }
    for (const [index, item] of final.output.entries()) {
      if ((item as { type: string }).type !== "function_call") continue;
      const { id, arguments: args } = item as { id: string; arguments: string };
      yield this.ev("response.output_item.added", {
        output_index: index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      yield this.ev("response.function_call_arguments.delta", { item_id: id, output_index: index, delta: args });
      yield this.ev("response.function_call_arguments.done", { item_id: id, output_index: index, arguments: args });
      yield this.ev("response.output_item.done", { output_index: index, item });
    }
    yield this.ev("response.completed", { response: final });
  }
}

/** GET /v1/responses/{id}: the stored answer as a Response. */
export async function retrieveResponse(caller: KeyCaller, id: string) {
  const { threadId, itemId } = await ownedAnswer(caller, id);
  const [item] = (await pathItems(caller.u.db, threadId, itemId, 1, caller.u.cipher)).filter((i) => i.id === itemId);
  if (!item) throw new NotFoundError("item");
  const usage =
    item.promptTokens !== null || item.completionTokens !== null
      ? { prompt_tokens: item.promptTokens ?? 0, completion_tokens: item.completionTokens ?? 0 }
      : null;
  const status = item.status === "complete" ? "completed" : "incomplete";
  return responseObject(
    id,
    {},
    { text: item.content, toolCalls: item.toolCalls ?? [], usage, status },
    item.model ?? "",
    item.createdAt.getTime(),
  );
}

/** DELETE /v1/responses/{id}: the answer leaves its thread, when nothing was said after it. */
export async function deleteResponse(caller: KeyCaller, id: string) {
  const { itemId } = await ownedAnswer(caller, id);
  if (await caller.u.db.item.count({ where: { parentId: itemId } }))
    throw new AppError("This response has replies after it in its conversation: delete those first.", 409);
  await caller.u.db.item.deleteMany({ where: { id: itemId, userId: caller.u.userId } });
  return { id, object: "response" as const, deleted: true };
}
