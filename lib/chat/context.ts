// Per-turn context assembly: the history window (newest whole turns within the
// token budget) plus the newest rolling summary on this branch, loaded in ONE
// query, then turned into the messages sent to the model.
import { NO_ATTACHMENTS, type TurnAttachments } from "@/lib/attachments/prompt";
import type OpenAI from "openai";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { callFunction } from "@/lib/db/function-calls";
import { retentionCutoff } from "@/lib/account/retention";
import { openItem, type ItemRow, type NewItem, type SessionItem, type ToolCall } from "@/lib/memory/session";
import type { ContentCipher } from "@/lib/crypto/content";
import { promptable, selectWindow } from "@/lib/memory/window";
import { MESSAGE_OVERHEAD, countTokens } from "@/lib/memory/tokens";

export type SummaryRef = { id: string; content: string; tokens: number; throughPosition: number; version: number };

export type Context = {
  /** Items sent to the model, oldest first. */
  window: SessionItem[];
  /** Items on the branch that fell out of the window and the summary does not cover yet. */
  unsummarized: SessionItem[];
  summary: SummaryRef | null;
  historyTokens: number;
};

type Row = ItemRow & {
  s_id: string | null;
  s_content: string | null;
  s_tokens: number | null;
  s_through: number | null;
  s_version: number | null;
};

export async function loadContext(
  db: Db,
  threadId: string,
  leafId: string,
  /** `pastWindow`: also load the items beyond the budget (up to maxItems), for the summary. */
  opts: { cipher: ContentCipher; budget?: number; maxItems?: number; pastWindow?: boolean },
): Promise<Context> {
  const { chat } = getConfig();
  const c = opts.cipher;
  const budget = opts.budget ?? chat.historyTokenBudget;
  const rows = await callFunction<Row>(db, {
    // SQL in the migration context_window_function (PL/pgSQL keeps its plan): the walk from the leaf up the
    // parent links, stopping past the budget and the summary's last item (not with pastWindow), and the
    // newest summary on this branch, on the first row. Sent with recall's reads in one statement
    // (lib/db/function-calls.ts).
    call: `mnemo_context_window($1, $2, $3::int, $4::timestamp, $5::int)`,
    params: [
      leafId,
      threadId,
      opts.maxItems ?? chat.historyMaxItems,
      retentionCutoff(),
      opts.pastWindow ? null : budget,
    ],
    dates: ["createdAt"],
  });
  const first = rows[0];
  const summary: SummaryRef | null =
    first?.s_id != null
      ? {
          id: first.s_id,
          content: c.open(first.s_content!),
          tokens: first.s_tokens!,
          throughPosition: first.s_through!,
          version: first.s_version!,
        }
      : null;
  const items = rows.map((r) => openItem(c, r));
  const fresh = promptable(summary ? items.filter((i) => i.position > summary.throughPosition) : items);
  // A walk cut short can end inside a turn; without its question, that part never goes to the model.
  const opensTurn = (i: SessionItem) => i.role === "user" || i.role === "system";
  const cut = fresh[0]?.parentId && !opensTurn(fresh[0]) ? fresh.findIndex(opensTurn) : 0;
  const whole = cut < 0 ? [] : fresh.slice(cut);
  const { kept, dropped, tokens } = selectWindow(whole, Math.max(0, budget - (summary?.tokens ?? 0)));
  const unsummarized = [...fresh.slice(0, fresh.length - whole.length), ...dropped];
  return { window: kept, unsummarized, summary, historyTokens: tokens + (summary?.tokens ?? 0) };
}

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export function toModelMessages(items: SessionItem[]): Msg[] {
  return items.map((i): Msg => {
    // A tool note from an imported conversation answers no call of ours: the model reads it as the assistant's side.
    if (i.role === "tool" && !i.toolCallId)
      return { role: "assistant", content: `[${i.toolName ?? "tool"}] ${i.content}` };
    if (i.role === "tool") return { role: "tool", tool_call_id: i.toolCallId ?? "", content: i.content };
    if (i.role === "assistant") {
      const calls = i.toolCalls?.map((c) => ({
        id: c.id,
        type: "function" as const,
        function: { name: c.name, arguments: c.arguments },
      }));
      return calls?.length
        ? { role: "assistant", content: i.content || null, tool_calls: calls }
        : { role: "assistant", content: i.content };
    }
    if (i.role === "system") return { role: "system", content: i.content };
    return { role: "user", content: i.content };
  });
}

export function buildPrompt(
  ctx: Context,
  memoryBlock: string | null = null,
  systemPrompt = getConfig().chat.systemPrompt,
  /** The thread's project's instructions, written by the user: part of the system prompt. */
  projectInstructions = "",
  /** The thread's documents and the window's pictures (lib/attachments/prompt.ts). */
  attached: Pick<TurnAttachments, "block" | "images"> = NO_ATTACHMENTS,
): Msg[] {
  const system = [systemPrompt];
  if (projectInstructions.trim())
    system.push(`The user's instructions for this project:\n${projectInstructions.trim()}`);
  if (memoryBlock) system.push(memoryBlock);
  if (attached.block) system.push(attached.block);
  if (ctx.summary)
    system.push(
      `Summary of the earlier part of this conversation (older messages are not shown):\n${ctx.summary.content}`,
    );
  // One system message, and turns that alternate: many open models' chat templates (Mistral, Gemma on vLLM) refuse
  // a second system message or two user messages in a row ("Conversation roles must alternate").
  const messages = toModelMessages(ctx.window).map((m, i) => {
    const pictures = attached.images.get(ctx.window[i].id);
    return pictures && m.role === "user"
      ? ({ role: "user", content: [{ type: "text", text: String(m.content) }, ...pictures] } as Msg)
      : m;
  });
  return [{ role: "system", content: system.join("\n\n") }, ...alternating(messages)];
}

/**
 * Two plain messages of the same side in a row become one (a question sent after a failed answer, an imported
 * chat's consecutive notes); a message with tool calls, or answering one, is left as it is.
 */
export function alternating(messages: Msg[]): Msg[] {
  const out: Msg[] = [];
  for (const m of messages) {
    const prev = out.at(-1);
    if (prev && plain(prev) && plain(m) && prev.role === m.role)
      out[out.length - 1] = { ...prev, content: `${prev.content}\n\n${m.content}` } as Msg;
    else out.push(m);
  }
  return out;
}

const plain = (m: Msg): m is Msg & { content: string } =>
  (m.role === "user" || m.role === "assistant") &&
  typeof m.content === "string" &&
  !("tool_calls" in m && m.tool_calls?.length);

export function summaryTokens(text: string): number {
  return countTokens(text) + MESSAGE_OVERHEAD;
}

/** The assistant's tool calls and their results, as the next round's messages. */
export function toolMessages(text: string, toolCalls: ToolCall[], results: NewItem[]): Msg[] {
  return [
    {
      role: "assistant",
      content: text || null,
      tool_calls: toolCalls.map((t) => ({
        id: t.id,
        type: "function" as const,
        function: { name: t.name, arguments: t.arguments },
      })),
    },
    ...toolCalls.map((t, i) => ({ role: "tool" as const, tool_call_id: t.id, content: results[i].content ?? "" })),
  ];
}
