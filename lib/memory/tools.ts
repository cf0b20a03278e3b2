// The memory tools the chat model can call during a turn ("remember that…",
// "forget that…", "what do you know about me?"). Arguments are checked with
// zod and every call is scoped to the signed-in user, whatever ids it names.
import type OpenAI from "openai";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import {
  addMemory,
  deleteMemories,
  listMemories,
  memoryKindSchema,
  memoryTextSchema,
  searchMemories,
  updateMemoryText,
  MemoryNotFoundError,
  SecretRefusedError,
} from "./long-term";

export type ToolContext = { db: Db; userId: string; threadId: string; itemId: string; paused: boolean };

const fn = (
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[],
): OpenAI.Chat.Completions.ChatCompletionTool => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties, required, additionalProperties: false } },
});

export const MEMORY_TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  fn(
    "remember",
    "Save a durable fact, preference or procedure about the user to long-term memory, when the user asks you to remember it.",
    {
      text: {
        type: "string",
        description: 'The memory, as a short third-person statement, e.g. "Prefers metric units".',
      },
      kind: { type: "string", enum: ["fact", "preference", "procedure", "other"] },
    },
    ["text"],
  ),
  fn(
    "update_memory",
    "Change the text of an existing memory (use search_memory first to find its id).",
    {
      id: { type: "string" },
      text: { type: "string" },
    },
    ["id", "text"],
  ),
  fn(
    "forget",
    "Delete memories the user asks you to forget. Give ids from search_memory, or a query to delete every match.",
    {
      ids: { type: "array", items: { type: "string" } },
      query: { type: "string" },
    },
    [],
  ),
  fn(
    "search_memory",
    'Search the user\'s long-term memories. An empty query lists the most recent ones (for "what do you know about me?").',
    {
      query: { type: "string" },
    },
    ["query"],
  ),
];

const args = {
  remember: z.object({ text: memoryTextSchema, kind: memoryKindSchema.optional() }),
  update_memory: z.object({ id: z.string().min(1).max(64), text: memoryTextSchema }),
  forget: z.object({
    ids: z.array(z.string().min(1).max(64)).max(100).optional(),
    query: z.string().max(200).optional(),
  }),
  search_memory: z.object({ query: z.string().max(200) }),
};

export type ToolOutcome = { result: string; changed: boolean };

export async function runMemoryTool(ctx: ToolContext, name: string, rawArgs: string): Promise<ToolOutcome> {
  let json: unknown;
  try {
    json = JSON.parse(rawArgs || "{}");
  } catch {
    return { result: JSON.stringify({ error: "Arguments must be JSON." }), changed: false };
  }
  const out = (v: unknown, changed = false): ToolOutcome => ({ result: JSON.stringify(v), changed });
  try {
    switch (name) {
      case "remember": {
        if (ctx.paused) return out({ error: "The user has paused memory; nothing was saved. Tell them." });
        const a = args.remember.parse(json);
        const m = await addMemory(
          ctx.db,
          ctx.userId,
          { text: a.text, kind: a.kind, source: "explicit", sourceThreadId: ctx.threadId, sourceItemId: ctx.itemId },
          "user",
          "Asked in chat to remember it",
        );
        return out({ saved: { id: m.id, text: m.text } }, true);
      }
      case "update_memory": {
        if (ctx.paused) return out({ error: "The user has paused memory; nothing was changed." });
        const a = args.update_memory.parse(json);
        const r = await updateMemoryText(ctx.db, ctx.userId, a.id, a.text, {
          actor: "user",
          source: "explicit",
          reason: "Asked in chat to change it",
          sourceThreadId: ctx.threadId,
          sourceItemId: ctx.itemId,
        });
        return out({ updated: { id: r.memory.id, text: r.memory.text } }, true);
      }
      case "forget": {
        const a = args.forget.parse(json);
        let ids = a.ids ?? [];
        if (!ids.length && a.query) ids = (await searchMemories(ctx.db, ctx.userId, a.query, 20)).map((m) => m.id);
        const n = await deleteMemories(ctx.db, ctx.userId, ids);
        return out({ deleted: n }, n > 0);
      }
      case "search_memory": {
        const a = args.search_memory.parse(json);
        const found = a.query.trim()
          ? await searchMemories(ctx.db, ctx.userId, a.query, 20)
          : (await listMemories(ctx.db, ctx.userId, { status: "active" })).slice(0, 30);
        return out({ memories: found.map((m) => ({ id: m.id, text: m.text, kind: m.kind })) });
      }
      default:
        return out({ error: `Unknown tool ${name}.` });
    }
  } catch (e) {
    if (e instanceof z.ZodError) return out({ error: e.issues[0].message });
    if (e instanceof MemoryNotFoundError || e instanceof SecretRefusedError) return out({ error: e.message });
    throw e;
  }
}
