// Mnemo's long-term memory as Agents SDK tools for one user: `recall_memory` (what Mnemo would put in front of the
// model for a query: the memory profile, relevant memories and passages, within a token budget) and the memory tools
// of chat and MCP (remember, update_memory, forget, search_memory, list_memories), defined once in lib/memory/tools.ts.
import { inMemoryScope, type UserContext } from "@/lib/user-context";
import { threadScope } from "@/lib/projects/scope";
import { tool } from "@openai/agents";
import { z } from "zod";
import { memoryBlock, recall } from "@/lib/memory/recall";
import { embedQuery } from "@/lib/llm/embeddings";
import { recordSend } from "@/lib/memory/disclosure";
import {
  MEMORY_TOOL_DEFINITIONS,
  MEMORY_TOOL_NAMES,
  runMemoryToolCall,
  type MemoryToolName,
  type ToolCaller,
} from "@/lib/memory/tools";

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
      await sentToAgent(
        u,
        r.memories.map((m) => m.id),
      );
      return memoryBlock(r) ?? "Nothing relevant is remembered.";
    },
  });
  // The memory tools' one definition (lib/memory/tools.ts): the same arguments, gate and results as chat and MCP.
  const memoryTool = (name: MemoryToolName) => {
    // The same JSON Schema the chat model gets; the arguments are checked by the tool's zod schema when run.
    const json = z.toJSONSchema(MEMORY_TOOL_DEFINITIONS[name].args, { io: "input" }) as unknown as {
      properties: Record<string, never>;
      required?: string[];
    };
    return tool({
      name,
      description: MEMORY_TOOL_DEFINITIONS[name].description,
      parameters: {
        type: "object",
        properties: json.properties,
        required: json.required ?? [],
        additionalProperties: true,
      },
      // Optional arguments stay optional (strict mode would make the model send every one).
      strict: false,
      async execute(args) {
        const u = await context();
        const caller: ToolCaller = {
          ...u,
          userMessage: null, // the user's own agent: its calls are the user's requests, under pause and review
          threadId: opts.threadId ?? null,
          reason: (done) => `Asked an agent to have it ${done}`,
          sent: (ids) => sentToAgent(u, ids),
        };
        return JSON.stringify((await runMemoryToolCall(caller, name, args as unknown)).result);
      },
    });
  };
  return [recallTool, ...MEMORY_TOOL_NAMES.map(memoryTool)];
}

/** What left the box: the agent's own model reads these (never counted as local: no private memory goes). */
async function sentToAgent(u: UserContext, memoryIds: string[]) {
  await recordSend(u.db, u.cipher, {
    userId: u.userId,
    memoryIds,
    model: "Agents SDK",
    baseURL: "agent",
    client: "agent",
  }).catch(() => undefined);
}
