// Mnemo's long-term memory as Agents SDK tools for one user: `recall_memory`
// (what Mnemo would put in front of the model for a query: the memory profile,
// relevant memories and passages, within a token budget) and `remember`
// (an explicit memory, with the same secret guard and de-duplication as chat).
import { SecretRefusedError } from "@/lib/errors";
import { inMemoryScope, type UserContext } from "@/lib/user-context";
import { threadScope } from "@/lib/projects/scope";
import { tool } from "@openai/agents";
import { z } from "zod";
import { memoryKindSchema } from "@/lib/memory/long-term";
import { addMemory } from "@/lib/memory/store";
import { memoryBlock, recall } from "@/lib/memory/recall";
import { embedQuery } from "@/lib/llm/embeddings";
import { recordSend } from "@/lib/memory/disclosure";

/**
 * `u`: the user's context (lib/user-context.ts), made by the caller once for the agent run. With `threadId`, recall
 * and remember work in that thread's project scope (lib/projects/scope.ts) whatever scope `u` has.
 */
export function mnemoMemoryTools(given: UserContext, opts: { budget?: number; threadId?: string } = {}) {
  const { db, userId } = given;
  let scoped: Promise<UserContext> | undefined;
  const context = () =>
    (scoped ??= opts.threadId
      ? threadScope(db, userId, opts.threadId).then((s) => inMemoryScope(given, s))
      : Promise.resolve(given));
  const recallTool = tool({
    name: "recall_memory",
    description:
      "Look up what Mnemo remembers about the user that is relevant to a query: facts, preferences, procedures and passages from earlier conversations.",
    parameters: z.object({ query: z.string().min(1).max(2000) }),
    async execute({ query }) {
      const u = await context();
      const r = await recall(u, query, {
        budget: opts.budget ?? 800,
        excludeThreadId: opts.threadId,
        semantic: embedQuery(db, query, userId),
      });
      // What left the box: the agent's own model reads these (never counted as local: no private memory goes).
      await recordSend(db, u.cipher, {
        userId,
        memoryIds: r.memories.map((m) => m.id),
        model: "Agents SDK",
        baseURL: "agent",
        client: "agent",
      }).catch(() => undefined);
      return memoryBlock(r) ?? "Nothing relevant is remembered.";
    },
  });
  const rememberTool = tool({
    name: "remember",
    description: "Save a durable fact, preference or procedure about the user when they ask you to remember it.",
    parameters: z.object({ text: z.string().min(1).max(500), kind: memoryKindSchema.default("fact") }),
    async execute({ text, kind }) {
      const u = await context();
      // The user's "pause learning" holds for agents too.
      if ((await u.settings()).paused)
        return JSON.stringify({ error: "The user has paused memory; nothing was saved. Tell them." });
      try {
        const m = await addMemory(
          u,
          { text, kind, source: "explicit", sourceThreadId: opts.threadId ?? null },
          "user",
          "Asked an agent to remember it",
        );
        return JSON.stringify({ saved: m.text, id: m.id });
      } catch (e) {
        if (e instanceof SecretRefusedError) return JSON.stringify({ error: e.message });
        throw e;
      }
    },
  });
  return [recallTool, rememberTool];
}
