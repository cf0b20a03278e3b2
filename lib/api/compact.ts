// POST /v1/responses/compact, so the Agents SDK's OpenAIResponsesCompactionSession works: the conversation so far
// (a previous response's thread, or the input items) becomes Mnemo's rolling summary, written by the memory model as
// the chat's own summaries are, and kept as the thread's summary (shown in the thread). The output follows OpenAI's:
// the user's messages verbatim, then one `compaction` item whose content a later request reads as that summary.
import { z } from "zod";
import crypto from "node:crypto";
import type { KeyCaller } from "@/lib/keys/api-keys";
import { AppError } from "@/lib/errors";
import { resolveConnectionCached } from "@/lib/llm/connection";
import { pathItems, type SessionItem } from "@/lib/memory/session";
import { foldSummary, saveSummary } from "@/lib/chat/summaries";
import { inputItem, toNewItem } from "./response-items";
import { ownedAnswer } from "./responses";
import { present } from "./nullable";

export const compactInput = z
  .object({
    model: z.string().max(200).nullish(),
    input: z.union([z.string(), z.array(inputItem).max(2000)]).nullish(),
    previous_response_id: z.string().max(100).nullish(),
    instructions: z.string().max(200_000).nullish(),
  })
  .passthrough()
  .transform(present);

type Line = Pick<SessionItem, "role" | "content" | "toolCalls">;

const transcript = (items: Line[]) =>
  items.flatMap((i) => {
    if (i.role === "user") return [`User: ${i.content}`];
    if (i.role === "tool") return [`Tool result: ${i.content}`];
    if (i.role !== "assistant") return [];
    const calls = (i.toolCalls ?? []).map((c) => `Assistant called ${c.name}(${c.arguments})`);
    return [...(i.content ? [`Assistant: ${i.content}`] : []), ...calls];
  });

export async function compactResponse(caller: KeyCaller, input: z.infer<typeof compactInput>) {
  const { u } = caller;
  const state = await resolveConnectionCached(u.db);
  if (!state.configured) throw new AppError(state.reason, 409);
  let items: Line[];
  let thread: { id: string; through: SessionItem } | null = null;
  if (input.previous_response_id) {
    const prev = await ownedAnswer(caller, input.previous_response_id);
    const branch = await pathItems(u.db, prev.threadId, prev.itemId, 100_000, u.cipher);
    items = branch;
    thread = { id: prev.threadId, through: branch.at(-1)! };
  } else {
    const given =
      typeof input.input === "string" ? [{ role: "user" as const, content: input.input }] : (input.input ?? []);
    items = given
      .map(toNewItem)
      .flatMap((i) => (i ? [{ role: i.role, content: i.content ?? "", toolCalls: i.toolCalls ?? null }] : []));
  }
  if (!items.length) throw new AppError("Nothing to compact: send input items or a previous_response_id.");
  const summary = await foldSummary(state.connection, { db: u.db, userId: u.userId }, null, transcript(items));
  if (!summary) throw new AppError("The memory model could not summarise this conversation; try again later.", 502);
  if (thread) await saveSummary(u, thread.id, thread.through, summary, state.connection.memoryModel);
  const users = items.filter((i) => i.role === "user");
  return {
    id: `cmp_${crypto.randomUUID()}`,
    object: "response.compaction" as const,
    created_at: Math.floor(Date.now() / 1000),
    output: [
      ...users.map((m) => ({ type: "message", role: "user", content: [{ type: "input_text", text: m.content }] })),
      { type: "compaction", id: `cmp_${crypto.randomUUID()}`, encrypted_content: summary },
    ],
    usage: null,
  };
}
