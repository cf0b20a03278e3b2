// Mnemo as a Model Context Protocol server (/mcp, Streamable HTTP, the official TypeScript SDK): Claude Desktop,
// Cursor, VS Code or any MCP client reads and writes the same memory as the web app, with a personal API key.
// Reading needs the key's "memory:read" scope, changing "memory:write". Every change is the model's (a client's
// model calls these tools), so it goes through modelChange: paused learning refuses it, review mode turns it into a
// proposal in the review queue, and a pinned or user-written memory changes only through one. A key limited to a
// project works in that project's memory scope (lib/projects/scope.ts).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { AppError, NotFoundError, SecretRefusedError } from "@/lib/errors";
import type { ApiScope, KeyCaller } from "@/lib/keys/api-keys";
import { listMemories, memoryKindSchema, memoryTextSchema, mentionable, searchMemories } from "@/lib/memory/long-term";
import { modelChange, type ChangeOutcome } from "@/lib/memory/writes";
import { loadProfile } from "@/lib/memory/profile";
import { dayOf, validSince } from "@/lib/memory/validity";
import { searchMessages } from "@/lib/chat/search";
import { recordSend } from "@/lib/memory/disclosure";

type ToolResult = { content: Array<{ type: "text"; text: string }>; isError?: boolean };
const result = (value: unknown, isError = false): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  ...(isError ? { isError } : {}),
});

export function mnemoMcpServer(caller: KeyCaller): McpServer {
  const { u } = caller;
  const server = new McpServer({ name: "mnemo", version: "1.0.0" });
  const origin = { reason: `Through MCP (key “${caller.keyName}”)` };
  /** What left the box: memories an MCP client's model was given (never counted as local). */
  const sent = async <T extends { id: string }>(memories: T[]) => {
    await recordSend(u.db, u.cipher, {
      userId: u.userId,
      memoryIds: memories.map((m) => m.id),
      model: "MCP client",
      baseURL: "mcp",
      client: "mcp",
      apiKeyId: caller.keyId,
    }).catch(() => undefined);
    return memories;
  };
  /** Runs a tool body when the key has the scope; the user's errors come back as tool errors. */
  const guarded =
    <A>(scope: ApiScope, fn: (args: A) => Promise<unknown>) =>
    async (args: A): Promise<ToolResult> => {
      if (!caller.scopes.includes(scope)) return result({ error: `This API key lacks the “${scope}” scope.` }, true);
      try {
        return result(await fn(args));
      } catch (e) {
        if (e instanceof AppError || e instanceof SecretRefusedError || e instanceof z.ZodError)
          return result({ error: e instanceof z.ZodError ? e.issues[0].message : e.message }, true);
        throw e;
      }
    };
  const outcome = (r: ChangeOutcome) =>
    r.outcome === "applied"
      ? { applied: true, memory: { id: r.memory.id, text: r.memory.text, status: r.memory.status } }
      : r.outcome === "proposed"
        ? { proposedForReview: true, note: "The user approves this change on Mnemo's memory page." }
        : { refused: r.why };

  server.registerTool(
    "search_memory",
    {
      description: "Search what Mnemo remembers about the user (facts, preferences, procedures) by words.",
      inputSchema: { query: z.string().min(1).max(200) },
    },
    guarded("memory:read", async ({ query }: { query: string }) => ({
      memories: (await sent(await searchMemories(u, query, 20))).map((m) => ({
        id: m.id,
        text: m.text,
        kind: m.kind,
        since: dayOf(m.since),
      })),
    })),
  );
  server.registerTool(
    "list_memories",
    {
      description: "List the user's active memories, newest first (at most 100).",
      inputSchema: { kind: memoryKindSchema.optional() },
    },
    guarded("memory:read", async ({ kind }: { kind?: z.infer<typeof memoryKindSchema> }) => {
      const active = await listMemories(u, { status: "active", kind }, { inContextScope: true });
      const shown = await sent(active.filter((m) => mentionable(m)).slice(0, 100));
      return {
        memories: shown.map((m) => ({
          id: m.id,
          text: m.text,
          kind: m.kind,
          pinned: m.pinned,
          since: dayOf(validSince(m)),
        })),
      };
    }),
  );
  server.registerTool(
    "remember",
    {
      description: "Save a durable fact, preference or procedure about the user, when the user asks to remember it.",
      inputSchema: { text: memoryTextSchema, kind: memoryKindSchema.optional() },
    },
    guarded("memory:write", async (a: { text: string; kind?: z.infer<typeof memoryKindSchema> }) =>
      outcome(await modelChange(u, { op: "add", memory: { text: a.text, kind: a.kind, source: "explicit" } }, origin)),
    ),
  );
  server.registerTool(
    "update_memory",
    {
      description:
        'Change a memory\'s text (ids from search_memory). why: "changed" when it was true and no longer is (kept as past), "corrected" when it was wrong.',
      inputSchema: {
        id: z.string().min(1).max(64),
        text: memoryTextSchema,
        why: z.enum(["changed", "corrected"]).optional(),
      },
    },
    guarded("memory:write", async (a: { id: string; text: string; why?: "changed" | "corrected" }) =>
      outcome(await modelChange(u, { op: "update", id: a.id, text: a.text, closesOld: a.why !== "corrected" }, origin)),
    ),
  );
  server.registerTool(
    "forget",
    {
      description: "Forget a memory the user asks to forget (id from search_memory). Restorable on the memory page.",
      inputSchema: { id: z.string().min(1).max(64) },
    },
    guarded("memory:write", async ({ id }: { id: string }) =>
      outcome(await modelChange(u, { op: "archive", id }, origin)),
    ),
  );
  server.registerTool(
    "search_conversations",
    {
      description: "Search the user's past conversations in Mnemo by what was said; newest first, with snippets.",
      inputSchema: { query: z.string().min(1).max(200) },
    },
    guarded("memory:read", async ({ query }: { query: string }) => {
      // A project's key searches its project's chats; any other key the chats in no project.
      const r = await searchMessages(
        u,
        { q: query, project: u.scope.projectId ?? "none", limit: 20 },
        { forModel: true },
      );
      return {
        messages: r.hits.map((h) => ({
          thread: h.threadTitle,
          role: h.role,
          date: h.createdAt,
          text: h.snippet.map((p) => p.text).join(""),
        })),
      };
    }),
  );
  server.registerResource(
    "memory-profile",
    "mnemo://memory/profile",
    { title: "What Mnemo remembers about the user", mimeType: "text/plain" },
    async (uri) => {
      if (!caller.scopes.includes("memory:read")) throw new NotFoundError("item");
      const profile = await loadProfile(u, 200);
      await sent(profile.memories);
      const text = profile.memories.map((m) => `- ${m.text}${m.pinned ? " (pinned)" : ""}`).join("\n");
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: text || "(no memories yet)" }] };
    },
  );
  return server;
}
