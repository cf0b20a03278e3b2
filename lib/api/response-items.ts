// The Responses API's items (messages, function calls and their outputs, as OpenAI's wire format spells them) and
// what they are in Mnemo: chat messages for the model server behind it, items of a thread to store. One Responses
// item is one Mnemo item, as in lib/agents/mnemo-session.ts, so a conversation's items list and delete one by one.
import { z } from "zod";
import type OpenAI from "openai";
import type { NewItem, SessionItem } from "@/lib/memory/session";
import { AppError } from "@/lib/errors";

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const part = z
  .object({
    type: z.string().max(40),
    text: z.string().optional(),
    image_url: z.string().nullish(),
    refusal: z.string().optional(),
  })
  .passthrough();

export const inputItem = z.union([
  z
    .object({
      type: z.literal("message").optional(),
      role: z.enum(["user", "assistant", "system", "developer"]),
      content: z.union([z.string(), z.array(part).max(200)]),
    })
    .passthrough(),
  z
    .object({
      type: z.literal("function_call"),
      call_id: z.string().max(200),
      name: z.string().max(200),
      arguments: z.string().max(200_000),
    })
    .passthrough(),
  z
    .object({
      type: z.literal("function_call_output"),
      call_id: z.string().max(200),
      output: z.union([z.string(), z.array(part).max(200)]),
    })
    .passthrough(),
  // A compaction (lib/api/compact.ts): the summary of what came before, read as such.
  z.object({ type: z.literal("compaction"), encrypted_content: z.string().max(200_000) }).passthrough(),
  // Reasoning items and the like: accepted and left out (the model server behind Mnemo speaks chat completions).
  z.object({ type: z.enum(["reasoning", "web_search_call", "file_search_call"]) }).passthrough(),
]);
export type InputItem = z.infer<typeof inputItem>;

const textOfParts = (content: string | z.infer<typeof part>[]): string =>
  typeof content === "string"
    ? content
    : content.map((p) => p.text ?? p.refusal ?? (p.type === "input_image" ? "[image]" : "")).join("");

/** The chat messages for the model server: consecutive function calls become one assistant message's tool calls. */
export function toChatMessages(items: InputItem[]): Msg[] {
  const out: Msg[] = [];
  for (const item of items) {
    if (!("type" in item) || item.type === undefined || item.type === "message") {
      const m = item as {
        role: "user" | "assistant" | "system" | "developer";
        content: string | z.infer<typeof part>[];
      };
      if (m.role === "user" && typeof m.content !== "string" && m.content.some((p) => p.type === "input_image"))
        out.push({ role: "user", content: m.content.map(chatPart) });
      else out.push({ role: m.role, content: textOfParts(m.content) } as Msg);
    } else if (item.type === "function_call") {
      const call = {
        id: item.call_id,
        type: "function" as const,
        function: { name: item.name, arguments: item.arguments },
      };
      const last = out.at(-1);
      if (last?.role === "assistant" && "tool_calls" in last && last.tool_calls) last.tool_calls.push(call);
      else out.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      out.push({ role: "tool", tool_call_id: item.call_id, content: textOfParts(item.output) });
    } else if (item.type === "compaction") {
      out.push({
        role: "system",
        content: `Summary of the conversation before this point:\n${item.encrypted_content}`,
      });
    }
  }
  return out;
}

function chatPart(p: z.infer<typeof part>): OpenAI.Chat.Completions.ChatCompletionContentPart {
  if (p.type === "input_image" && p.image_url) return { type: "image_url", image_url: { url: p.image_url } };
  return { type: "text", text: p.text ?? "" };
}

/** The Mnemo item to store for a Responses item (null: a kind Mnemo does not keep). */
export function toNewItem(item: InputItem): NewItem | null {
  if (!("type" in item) || item.type === undefined || item.type === "message") {
    const m = item as { role: string; content: string | z.infer<typeof part>[] };
    const role = m.role === "developer" ? "system" : (m.role as "user" | "assistant" | "system");
    return { role, content: textOfParts(m.content) };
  }
  if (item.type === "function_call")
    return {
      role: "assistant",
      content: "",
      toolCalls: [{ id: item.call_id, name: item.name, arguments: item.arguments }],
    };
  if (item.type === "function_call_output")
    return { role: "tool", content: textOfParts(item.output), toolCallId: item.call_id };
  return null;
}

/** An item's id as the API shows it: its kind's prefix and the Mnemo item's id. */
export const itemId = (i: SessionItem) => `${i.role === "tool" ? "fco" : i.toolCalls?.length ? "fc" : "msg"}_${i.id}`;

/** The Mnemo item id in an API item id ("msg_…", "fc_…", "fco_…"). */
export function mnemoItemId(apiId: string): string {
  const m = /^(?:msg|fc|fco)_([0-9a-f-]{36})$/.exec(apiId);
  if (!m) throw new AppError(`No item ${apiId}.`, 404);
  return m[1];
}

/** The Responses items for a stored Mnemo item (an assistant item with several calls gives one item per call). */
export function toApiItems(i: SessionItem): object[] {
  if (i.role === "tool")
    return [
      {
        type: "function_call_output",
        id: itemId(i),
        call_id: i.toolCallId ?? "",
        output: i.content,
        status: "completed",
      },
    ];
  if (i.role === "assistant" && i.toolCalls?.length) {
    const calls = i.toolCalls.map((c) => ({
      type: "function_call",
      id: itemId(i),
      call_id: c.id,
      name: c.name,
      arguments: c.arguments,
      status: "completed",
    }));
    return i.content ? [messageItem(i), ...calls] : calls;
  }
  return [messageItem(i)];
}

function messageItem(i: SessionItem) {
  const assistant = i.role === "assistant";
  return {
    type: "message",
    id: itemId(i),
    status: i.status === "complete" ? "completed" : "incomplete",
    role: i.role,
    content: [
      assistant
        ? { type: "output_text", text: i.content, annotations: [], logprobs: [] }
        : { type: "input_text", text: i.content },
    ],
  };
}

/** The chat messages a stored branch replays (a previous response, a conversation's items). */
export function storedToChat(items: SessionItem[]): Msg[] {
  const out: Msg[] = [];
  for (const i of items) {
    if (i.role === "tool") {
      if (i.toolCallId) out.push({ role: "tool", tool_call_id: i.toolCallId, content: i.content });
      else out.push({ role: "assistant", content: `[${i.toolName ?? "tool"}] ${i.content}` });
    } else if (i.role === "assistant" && i.toolCalls?.length)
      out.push({
        role: "assistant",
        content: i.content || null,
        tool_calls: i.toolCalls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        })),
      });
    else out.push({ role: i.role, content: i.content } as Msg);
  }
  return out;
}
