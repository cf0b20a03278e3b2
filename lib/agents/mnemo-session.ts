// A Mnemo thread as an OpenAI Agents SDK session (`Session` of @openai/agents),
// so agents built with the SDK keep their history in Mnemo, on the thread's
// active branch, with the app's ownership and encryption rules (it wraps
// lib/memory/session.ts, opened through openSession, which checks the owner).
//
// One SDK item is one Mnemo item, so popItem() undoes exactly one SDK item:
//   user message            <-> user item
//   assistant message       <-> assistant item (text)
//   system message          <-> system item
//   function_call           <-> assistant item with one tool call
//   function_call_result    <-> tool item (toolCallId, toolName, output text)
// Other item kinds (reasoning, hosted tools, computer use) are not stored; the
// SDK replays without them.
import type { AgentInputItem, Session } from "@openai/agents";
import { inMemoryScope, userContext } from "@/lib/user-context";
import { threadScope } from "@/lib/projects/scope";
import type { Db } from "@/lib/db/client";
import { createThread, openSession } from "@/lib/chat/threads";
import type { NewItem, PrismaSession, SessionItem } from "@/lib/memory/session";

type Any = Record<string, unknown>;

const textOf = (content: unknown): string => {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p: Any) =>
      typeof p?.text === "string"
        ? p.text
        : typeof p?.refusal === "string"
          ? p.refusal
          : p?.type === "input_file"
            ? "[file]"
            : p?.type === "input_image"
              ? "[image]"
              : "",
    )
    .join("");
};

const outputText = (output: unknown): string => {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && (output as Any).type === "text")
    return String((output as Any).text ?? "");
  return JSON.stringify(output ?? null);
};

/** The Mnemo item for an SDK item, or null for kinds Mnemo does not keep. */
export function toMnemoItem(item: AgentInputItem): NewItem | null {
  const i = item as Any;
  if (i.type === "function_call") {
    return {
      role: "assistant",
      content: "",
      toolCalls: [{ id: String(i.callId), name: String(i.name), arguments: String(i.arguments ?? "") }],
    };
  }
  if (i.type === "function_call_result") {
    return {
      role: "tool",
      content: outputText(i.output),
      toolCallId: String(i.callId),
      toolName: String(i.name ?? ""),
    };
  }
  if (i.type !== undefined && i.type !== "message") return null;
  if (i.role === "user") return { role: "user", content: textOf(i.content) };
  if (i.role === "assistant") return { role: "assistant", content: textOf(i.content) };
  if (i.role === "system") return { role: "system", content: textOf(i.content) };
  return null;
}

/** The SDK item for a Mnemo item. */
export function toAgentItem(item: SessionItem): AgentInputItem {
  if (item.role === "tool" && !item.toolCallId) {
    // A tool note from an imported conversation: no call of ours to answer, so it reads as the assistant's text.
    return {
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: `[${item.toolName ?? "tool"}] ${item.content}` }],
    };
  }
  if (item.role === "tool") {
    return {
      type: "function_call_result",
      callId: item.toolCallId ?? "",
      name: item.toolName ?? "",
      status: "completed",
      output: { type: "text", text: item.content },
    };
  }
  const call = item.role === "assistant" ? item.toolCalls?.[0] : undefined;
  if (call)
    return { type: "function_call", callId: call.id, name: call.name, arguments: call.arguments, status: "completed" };
  if (item.role === "assistant") {
    return {
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: item.content }],
    };
  }
  if (item.role === "system") return { type: "message", role: "system", content: item.content };
  return { type: "message", role: "user", content: item.content };
}

export class MnemoSession implements Session {
  private constructor(private readonly inner: PrismaSession) {}

  /** The user's thread `threadId` (another user's is "not found"), or a new thread when none is given. */
  static async open(db: Db, userId: string, threadId?: string, opts: { title?: string } = {}): Promise<MnemoSession> {
    const u = await userContext(db, userId); // the agent session's one context
    const id = threadId ?? (await createThread(u, { title: opts.title ?? "Agent session" })).id;
    // No thread of another user's gets past openSession; a project's thread works in its project's scope.
    const scoped = threadId ? inMemoryScope(u, await threadScope(db, userId, threadId)) : u;
    return new MnemoSession(await openSession(scoped, id));
  }

  async getSessionId(): Promise<string> {
    return this.inner.getSessionId();
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    return (await this.inner.getItems(limit)).filter((i) => i.status !== "streaming").map(toAgentItem);
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    const mapped = items.map(toMnemoItem).filter((i): i is NewItem => i !== null);
    // One statement for the whole batch: concurrent runs on one session never interleave within it.
    if (mapped.length) await this.inner.addItems(mapped);
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const it = await this.inner.popItem();
    return it ? toAgentItem(it) : undefined;
  }

  async clearSession(): Promise<void> {
    await this.inner.clearSession();
  }
}
