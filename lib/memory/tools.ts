// The memory tools the chat model can call during a turn ("remember that…",
// "forget that…", "what do you know about me?"). Each tool is defined once, in
// zod: the model gets its JSON Schema (z.toJSONSchema), and the call's
// arguments are checked by the same schema. Every call is scoped to the
// signed-in user, whatever ids it names.
import { NotFoundError, SecretRefusedError } from "@/lib/errors";
import type { UserContext } from "@/lib/user-context";
import type OpenAI from "openai";
import { z } from "zod";
import { dayOf, validSince } from "./validity";
import {
  listMemories,
  memoryKindSchema,
  memoryTextSchema,
  mentionable,
  ownedMemory,
  searchMemories,
} from "./long-term";
import { addMemory, type NewMemory } from "./store";
import { addedWords, groundedIn } from "./grounding";
import { modelChange, undoIfForgotten, type ChangeOutcome } from "./writes";
import { asksToForget, asksToRemember } from "./user-request";

/** The user's context and where the call came from: the thread, and the user's message (its id and words). */
export type ToolContext = UserContext & { threadId: string; itemId: string; userMessage: string; paused: boolean };

const memoryId = z.string().min(1).max(64);

/** Each tool's description and arguments, the one definition of both. */
const TOOL_DEFINITIONS = {
  remember: {
    description:
      "Save a durable fact, preference or procedure about the user to long-term memory, when the user asks you to remember it.",
    args: z.object({
      text: memoryTextSchema.describe('The memory, as a short third-person statement, e.g. "Prefers metric units".'),
      kind: memoryKindSchema.optional(),
      forDays: z
        .number()
        .int()
        .min(1)
        .max(3650)
        .optional()
        .describe('Only when the user says how long to keep it ("for a week": 7). Omit to keep it until forgotten.'),
    }),
  },
  update_memory: {
    description:
      'Change the text of an existing memory (use search_memory first to find its id). why: "changed" when it was true and no longer is (the user moved, changed jobs: the old fact is kept as past), "corrected" when it was wrong.',
    args: z.object({ id: memoryId, text: memoryTextSchema, why: z.enum(["changed", "corrected"]).default("changed") }),
  },
  forget: {
    description:
      "Delete memories the user asks you to forget. Give ids from search_memory, or a query to delete every match.",
    args: z.object({ ids: z.array(memoryId).max(100).optional(), query: z.string().max(200).optional() }),
  },
  search_memory: {
    description:
      'Search the user\'s long-term memories. An empty query lists the most recent ones (for "what do you know about me?").',
    args: z.object({ query: z.string().max(200) }),
  },
} as const;

type ToolName = keyof typeof TOOL_DEFINITIONS;
const args = Object.fromEntries(Object.entries(TOOL_DEFINITIONS).map(([n, d]) => [n, d.args])) as {
  [K in ToolName]: (typeof TOOL_DEFINITIONS)[K]["args"];
};

/** The tools as the model sees them: JSON Schema made from the zod definitions (the input side of transforms). */
export const MEMORY_TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = Object.entries(TOOL_DEFINITIONS).map(
  ([name, d]) => {
    const { $schema: _drop, ...parameters } = z.toJSONSchema(d.args, { io: "input" }) as Record<string, unknown>;
    // Unknown keys are dropped when parsed; the model is told not to send any.
    return {
      type: "function",
      function: { name, description: d.description, parameters: { ...parameters, additionalProperties: false } },
    };
  },
);

export type ToolOutcome = { result: string; changed: boolean };

const origin = (ctx: ToolContext, what: string, asked = true) => ({
  reason: asked ? `Asked in chat to have it ${what}` : `The chat model asked to have it ${what}; your message did not`,
  sourceThreadId: ctx.threadId,
  sourceItemId: ctx.itemId,
});

/** What the model is told about a gated change. */
function toolOutcome(r: ChangeOutcome, done: string) {
  if (r.outcome === "applied") return { [done]: { id: r.memory.id, text: r.memory.text } };
  if (r.outcome === "proposed")
    return { proposedForReview: r.proposalId, note: "This changes only once the user approves it on the memory page." };
  return { error: r.why };
}

/**
 * A `remember` call the user's message did not ask for (text they never wrote may have asked for it): the memory waits
 * as a proposal, inferred, until the user approves it; it goes into no prompt before that.
 */
async function rememberUnasked(ctx: ToolContext, memory: Omit<NewMemory, "status" | "source">) {
  const r = await modelChange(
    ctx,
    { op: "add", memory: { ...memory, source: "inferred" } },
    origin(ctx, "remembered", false),
    { paused: ctx.paused, review: true },
  );
  if (r.outcome === "refused") return { error: r.why };
  if (r.outcome === "applied" && r.memory.status === "active") return { alreadyKnown: { id: r.memory.id } };
  return {
    proposedForReview: r.outcome === "applied" ? r.memory.id : r.proposalId,
    note: "The user's message did not ask to remember this: it is kept only once they approve it on the memory page.",
  };
}

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
        const memory = {
          text: a.text,
          kind: a.kind,
          sourceThreadId: ctx.threadId,
          sourceItemId: ctx.itemId,
          expiresAt: a.forDays ? new Date(Date.now() + a.forDays * 86_400_000) : null,
        };
        if (!asksToRemember(ctx.userMessage)) return out(await rememberUnasked(ctx, memory), true);
        const m = await addMemory(ctx, { ...memory, source: "explicit" }, "user", "Asked in chat to remember it");
        // "Forget me" came while this answer was being written: it covers this request too.
        if (await undoIfForgotten(ctx, { sourceItemId: ctx.itemId }, m.id))
          return out({ error: "The user asked Mnemo to forget everything; nothing was saved." });
        return out({ saved: { id: m.id, text: m.text, until: m.expiresAt?.toISOString().slice(0, 10) } }, true);
      }
      case "update_memory": {
        // The model's change, through the gate of lib/memory/writes.ts (pause, review, protected memories); one
        // whose new words the user's message does not hold (lib/memory/grounding.ts) is only proposed.
        const a = args.update_memory.parse(json);
        const target = await ownedMemory(ctx, a.id);
        const grounded = groundedIn(ctx.userMessage, addedWords(target.text, a.text));
        const r = await modelChange(
          ctx,
          { op: "update", id: a.id, text: a.text, closesOld: a.why === "changed" },
          origin(ctx, "changed", grounded),
          grounded ? undefined : { paused: ctx.paused, review: true },
        );
        return out(toolOutcome(r, "updated"), r.outcome !== "refused");
      }
      case "forget": {
        // Archived (restorable from the dashboard), or proposed for review: a model never deletes a memory.
        const a = args.forget.parse(json);
        let ids = a.ids ?? [];
        if (!ids.length && a.query) ids = (await searchMemories(ctx, a.query, 5)).map((m) => m.id);
        // Not asked in the user's words: each removal only proposed (see lib/memory/user-request.ts).
        const asked = asksToForget(ctx.userMessage);
        const policy = asked ? undefined : { paused: ctx.paused, review: true };
        const outcomes: ChangeOutcome[] = [];
        for (const id of ids.slice(0, 20))
          outcomes.push(
            await modelChange(ctx, { op: "archive", id }, origin(ctx, "forgotten", asked), policy).catch((e) => {
              if (e instanceof NotFoundError) return { outcome: "refused" as const, why: e.message };
              throw e;
            }),
          );
        const count = (o: string) => outcomes.filter((r) => r.outcome === o).length;
        const result = { archived: count("applied"), proposedForReview: count("proposed"), refused: count("refused") };
        return out(
          {
            ...result,
            note: result.proposedForReview
              ? "Some memories only change with the user's approval: tell them to approve it on the memory page."
              : undefined,
          },
          result.archived + result.proposedForReview > 0,
        );
      }
      case "search_memory": {
        const a = args.search_memory.parse(json);
        const found = a.query.trim()
          ? await searchMemories(ctx, a.query, 20)
          : (await listMemories(ctx, { status: "active" }, { inContextScope: true }))
              .filter((m) => mentionable(m))
              .slice(0, 30);
        // `since`: the day it became true (else was learned), so "when…?" can be answered from a search too.
        return out({
          memories: found.map((m) => ({
            id: m.id,
            text: m.text,
            kind: m.kind,
            since: dayOf("since" in m ? m.since : validSince(m)),
          })),
        });
      }
      default:
        return out({ error: `Unknown tool ${name}.` });
    }
  } catch (e) {
    if (e instanceof z.ZodError) return out({ error: e.issues[0].message });
    if (e instanceof NotFoundError || e instanceof SecretRefusedError) return out({ error: e.message });
    throw e;
  }
}
