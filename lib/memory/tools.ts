// The memory tools, defined once: remember, update_memory, forget, search_memory, list_memories. The chat model calls
// them during a turn, an MCP client through /mcp, an agent through the Agents SDK tools (lib/agents/memory-tools.ts);
// each of those is an adapter that maps names and errors, never a rule. Each tool's arguments are one zod schema (the
// model gets its JSON Schema), and every change goes through the gate (lib/memory/writes.ts): pause, review, pinned
// or user-written memories, private ones out of a remote model's reach. Every call is scoped to the caller's user and
// memory scope, whatever ids it names.
import { NotFoundError, SecretRefusedError } from "@/lib/errors";
import type { MemorySettings, UserContext } from "@/lib/user-context";
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
  type RankedMemory,
} from "./long-term";
import type { Memory } from "@/lib/generated/prisma/client";
import { addedWords, groundedIn } from "./grounding";
import { modelChange, type ChangeOrigin, type ChangeOutcome } from "./writes";
import { asksToForget, asksToRemember } from "./user-request";

/** Who calls a memory tool, and what their words allow. */
export type ToolCaller = UserContext & {
  /** Why, for the version row: names the way in and what was done, never user text (reasons are not sealed). */
  reason: (done: "remembered" | "changed" | "forgotten", asked: boolean) => string;
  /** The message the call answers, when the way in has one (the web chat): provenance, and undo takes it back. */
  threadId?: string | null;
  itemId?: string | null;
  /**
   * The user's own message, when the way in sees it (the web chat). A remember or forget acts at once only when the
   * user's own words ask for it (lib/memory/user-request.ts), and an update only when they hold its new words;
   * anything else waits for review. Null: the user's own client through their key (MCP, an agent), whose calls are
   * the user's requests, under pause and review all the same.
   */
  userMessage: string | null;
  /** The settings as the way in read them (the chat turn reads them with its message); else read at each call. */
  known?: MemorySettings;
  /** Memories a tool gave the caller's model: what left the box (lib/memory/disclosure.ts). */
  sent?: (memoryIds: string[]) => Promise<void>;
};

/** The web chat's caller: the turn's user in the thread's scope, answering the user's message `itemId`. */
export function chatToolCaller(
  u: UserContext,
  m: { threadId: string; itemId: string; userMessage: string; paused: boolean; sent?: ToolCaller["sent"] },
): ToolCaller {
  return {
    ...u,
    threadId: m.threadId,
    itemId: m.itemId,
    userMessage: m.userMessage,
    sent: m.sent,
    // Pause as read with the message; review as it is now (the user may have just turned it on).
    known: m.paused ? { paused: true, review: true } : undefined,
    reason: (done, asked) =>
      asked ? `Asked in chat to have it ${done}` : `The chat model asked to have it ${done}; your message did not`,
  };
}

/** The API key scope a tool needs (MCP lists and runs only what the key holds). */
export type ToolScope = "memory:read" | "memory:write";

const memoryId = z.string().min(1).max(64);

/** Each tool's description, arguments and scope: the one definition of each. */
export const MEMORY_TOOL_DEFINITIONS = {
  remember: {
    scope: "memory:write",
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
    scope: "memory:write",
    description:
      'Change the text of an existing memory (use search_memory first to find its id). why: "changed" when it was true and no longer is (the user moved, changed jobs: the old fact is kept as past), "corrected" when it was wrong.',
    args: z.object({ id: memoryId, text: memoryTextSchema, why: z.enum(["changed", "corrected"]).default("changed") }),
  },
  forget: {
    scope: "memory:write",
    description:
      "Forget memories the user asks you to forget. Give ids from search_memory, or a query to forget every match.",
    args: z.object({ ids: z.array(memoryId).max(100).optional(), query: z.string().max(200).optional() }),
  },
  search_memory: {
    scope: "memory:read",
    description:
      'Search the user\'s long-term memories. An empty query lists the most recent ones (for "what do you know about me?").',
    args: z.object({ query: z.string().max(200) }),
  },
  list_memories: {
    scope: "memory:read",
    description: "List the user's active memories, newest first (at most 100).",
    args: z.object({ kind: memoryKindSchema.optional() }),
  },
} as const;

export type MemoryToolName = keyof typeof MEMORY_TOOL_DEFINITIONS;
type Args<K extends MemoryToolName> = z.output<(typeof MEMORY_TOOL_DEFINITIONS)[K]["args"]>;
export const MEMORY_TOOL_NAMES = Object.keys(MEMORY_TOOL_DEFINITIONS) as MemoryToolName[];

/**
 * The tools as the chat model sees them: JSON Schema made from the zod definitions (the input side of transforms).
 * Not `list_memories`: in chat, `search_memory` with an empty query lists, and every tool costs prompt tokens.
 */
export const MEMORY_TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = MEMORY_TOOL_NAMES.filter(
  (name) => name !== "list_memories",
).map((name) => {
  const d = MEMORY_TOOL_DEFINITIONS[name];
  const { $schema: _drop, ...parameters } = z.toJSONSchema(d.args, { io: "input" }) as Record<string, unknown>;
  // Unknown keys are dropped when parsed; the model is told not to send any.
  return {
    type: "function",
    function: { name, description: d.description, parameters: { ...parameters, additionalProperties: false } },
  };
});

/** A tool's result: what the caller's model is told. `error` marks a call that did nothing. */
export type ToolResult = Record<string, unknown> & { error?: string };
/** The result, and whether memory may have changed (the chat refreshes what it shows). */
export type ToolOutcome = { result: ToolResult; changed: boolean };

const REVIEW_NOTE = "This changes only once the user approves it on the memory page: tell them.";
const UNASKED_NOTE =
  "The user's message did not ask for this: it is kept only once they approve it on the memory page.";

function origin(
  caller: ToolCaller,
  done: "remembered" | "changed" | "forgotten",
  asked: boolean,
  userWords = false,
): ChangeOrigin {
  return {
    reason: caller.reason(done, asked),
    userWords,
    sourceThreadId: caller.threadId ?? null,
    sourceItemId: caller.itemId ?? null,
  };
}

/** The settings a change is judged by: a call the user's words did not ask for always goes to review. */
const policy = (caller: ToolCaller, asked: boolean): MemorySettings | undefined =>
  asked ? caller.known : { paused: caller.known?.paused ?? false, review: true };

async function remember(caller: ToolCaller, a: Args<"remember">): Promise<ToolOutcome> {
  const asked = caller.userMessage === null || asksToRemember(caller.userMessage);
  const memory = {
    text: a.text,
    kind: a.kind,
    // The user asked (their words, or their own client): theirs, at the top of precedence. Else learned, for review.
    source: asked ? ("explicit" as const) : ("inferred" as const),
    expiresAt: a.forDays ? new Date(Date.now() + a.forDays * 86_400_000) : null,
  };
  const r = await modelChange(
    caller,
    { op: "add", memory },
    origin(caller, "remembered", asked, asked),
    policy(caller, asked),
  );
  if (r.outcome === "refused") return { result: { error: r.why }, changed: false };
  if (r.outcome === "proposed")
    return { result: { proposedForReview: r.proposalId, note: REVIEW_NOTE }, changed: true };
  const m = r.memory;
  if (m.status === "pending")
    return { result: { proposedForReview: m.id, note: asked ? REVIEW_NOTE : UNASKED_NOTE }, changed: true };
  if (!asked) return { result: { alreadyKnown: { id: m.id } }, changed: false };
  return {
    result: { saved: { id: m.id, text: m.text, until: m.expiresAt?.toISOString().slice(0, 10) } },
    changed: true,
  };
}

async function update(caller: ToolCaller, a: Args<"update_memory">): Promise<ToolOutcome> {
  const target = await ownedMemory(caller, a.id);
  // Only proposed when the user's message does not hold the words it adds (lib/memory/grounding.ts).
  const asked = caller.userMessage === null || groundedIn(caller.userMessage, addedWords(target.text, a.text));
  const r = await modelChange(
    caller,
    { op: "update", id: a.id, text: a.text, closesOld: a.why === "changed" },
    origin(caller, "changed", asked),
    policy(caller, asked),
  );
  return { result: changeResult(r, "updated"), changed: r.outcome !== "refused" };
}

async function forget(caller: ToolCaller, a: Args<"forget">): Promise<ToolOutcome> {
  // Archived (restorable from the dashboard), or proposed for review: a model never deletes a memory.
  let ids = a.ids ?? [];
  if (!ids.length && a.query) ids = (await searchMemories(caller, a.query, 5)).map((m) => m.id);
  const asked = caller.userMessage === null || asksToForget(caller.userMessage);
  const outcomes: ChangeOutcome[] = [];
  for (const id of ids.slice(0, 20))
    outcomes.push(
      await modelChange(caller, { op: "archive", id }, origin(caller, "forgotten", asked), policy(caller, asked))
        // Not the caller's to reach (another user's, another project's, private for a remote model).
        .catch((e) => {
          if (e instanceof NotFoundError) return { outcome: "refused" as const, why: e.message };
          throw e;
        }),
    );
  const count = (o: string) => outcomes.filter((r) => r.outcome === o).length;
  const done = { archived: count("applied"), proposedForReview: count("proposed"), refused: count("refused") };
  const only = outcomes.length === 1 && outcomes[0].outcome === "refused" ? outcomes[0].why : undefined;
  return {
    result: {
      ...done,
      ...(only ? { error: only } : {}),
      ...(done.proposedForReview ? { note: REVIEW_NOTE } : {}),
    },
    changed: done.archived + done.proposedForReview > 0,
  };
}

/** `since`: the day it became true (else was learned), so "when…?" can be answered from a search too. */
async function shown(caller: ToolCaller, found: Array<RankedMemory | Memory>) {
  await caller.sent?.(found.map((m) => m.id));
  return found.map((m) => ({
    id: m.id,
    text: m.text,
    kind: m.kind,
    pinned: m.pinned,
    since: dayOf("since" in m ? m.since : validSince(m)),
  }));
}

async function listed(caller: ToolCaller, kind?: z.infer<typeof memoryKindSchema>, max = 100) {
  const active = await listMemories(caller, { status: "active", kind }, { inContextScope: true });
  return active.filter((m) => mentionable(m)).slice(0, max);
}

function changeResult(r: ChangeOutcome, done: string): ToolResult {
  if (r.outcome === "applied") return { [done]: { id: r.memory.id, text: r.memory.text } };
  if (r.outcome === "proposed") return { proposedForReview: r.proposalId, note: REVIEW_NOTE };
  return { error: r.why };
}

/** Runs one memory tool on already-parsed JSON arguments; the caller's errors come back as `{ error }`. */
export async function runMemoryToolCall(caller: ToolCaller, name: string, json: unknown): Promise<ToolOutcome> {
  const fail = (error: string): ToolOutcome => ({ result: { error }, changed: false });
  const writes = name === "remember" || name === "update_memory" || name === "forget";
  if (writes && caller.readOnly) return fail("You can read this project's memories but not change them (a viewer).");
  try {
    switch (name as MemoryToolName) {
      case "remember":
        return await remember(caller, MEMORY_TOOL_DEFINITIONS.remember.args.parse(json));
      case "update_memory":
        return await update(caller, MEMORY_TOOL_DEFINITIONS.update_memory.args.parse(json));
      case "forget":
        return await forget(caller, MEMORY_TOOL_DEFINITIONS.forget.args.parse(json));
      case "search_memory": {
        const a = MEMORY_TOOL_DEFINITIONS.search_memory.args.parse(json);
        const found = a.query.trim() ? await searchMemories(caller, a.query, 20) : await listed(caller, undefined, 30);
        return { result: { memories: await shown(caller, found) }, changed: false };
      }
      case "list_memories": {
        const a = MEMORY_TOOL_DEFINITIONS.list_memories.args.parse(json);
        return { result: { memories: await shown(caller, await listed(caller, a.kind)) }, changed: false };
      }
      default:
        return fail(`Unknown tool ${name}.`);
    }
  } catch (e) {
    if (e instanceof z.ZodError) return fail(e.issues[0].message);
    if (e instanceof NotFoundError || e instanceof SecretRefusedError) return fail(e.message);
    throw e;
  }
}

/** The chat turn's adapter: the model's arguments as it sent them (a JSON string), the result as a JSON string. */
export async function runMemoryTool(
  caller: ToolCaller,
  name: string,
  rawArgs: string,
): Promise<{ result: string; changed: boolean }> {
  let json: unknown;
  try {
    json = JSON.parse(rawArgs || "{}");
  } catch {
    return { result: JSON.stringify({ error: "Arguments must be JSON." }), changed: false };
  }
  const r = await runMemoryToolCall(caller, name, json);
  return { result: JSON.stringify(r.result), changed: r.changed };
}
