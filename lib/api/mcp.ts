// Mnemo as a Model Context Protocol server (/mcp, Streamable HTTP, the official TypeScript SDK): Claude Desktop,
// Cursor, VS Code or any MCP client reads and writes the same memory as the web app, with a personal API key.
// The memory tools are the one definition of lib/memory/tools.ts (this file maps them onto MCP: names, errors);
// `tools/list` shows a key only the tools its scopes allow. Every change is the client's model's, so it goes through
// the gate (lib/memory/writes.ts): paused learning refuses it, review turns it into a proposal, a pinned or
// user-written memory changes only through one, and a private memory is out of reach (an MCP client is never local).
// A key limited to a project works in that project's memory scope (lib/projects/scope.ts).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { AppError, SecretRefusedError } from "@/lib/errors";
import type { ApiScope, KeyCaller } from "@/lib/keys/api-keys";
import { MEMORY_TOOL_DEFINITIONS, MEMORY_TOOL_NAMES, runMemoryToolCall, type ToolCaller } from "@/lib/memory/tools";
import { loadProfile } from "@/lib/memory/profile";
import { searchMessages } from "@/lib/chat/search";
import { recordSend } from "@/lib/memory/disclosure";
import { keyReason } from "@/lib/keys/key-reason";

type ToolResult = { content: Array<{ type: "text"; text: string }>; isError?: boolean };
const result = (value: unknown, isError = false): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  ...(isError ? { isError } : {}),
});

/** The scope message for a key that lacks one, the same for tools and resources. */
export const lacksScope = (scope: ApiScope) => `This API key lacks the “${scope}” scope.`;

export function mnemoMcpServer(caller: KeyCaller): McpServer {
  const { u } = caller;
  const server = new McpServer({ name: "mnemo", version: "1.0.0" });
  /** What left the box: memories an MCP client's model was given (never counted as local). */
  const sent = async (memoryIds: string[]) => {
    await recordSend(u.db, u.cipher, {
      userId: u.userId,
      memoryIds,
      model: "MCP client",
      baseURL: "mcp",
      client: "mcp",
      apiKeyId: caller.keyId,
    }).catch(() => undefined);
  };
  const tools: ToolCaller = {
    ...u,
    userMessage: null,
    sent,
    // The key by id, not by name: reasons are not sealed, and the name is shown from the key when read.
    reason: () => keyReason("Through MCP", caller.keyId),
  };
  const has = (scope: ApiScope) => caller.scopes.includes(scope);
  /** Runs a tool body; the user's errors come back as tool errors. */
  const guarded =
    <A>(scope: ApiScope, fn: (args: A) => Promise<unknown>) =>
    async (args: A): Promise<ToolResult> => {
      if (!has(scope)) return result({ error: lacksScope(scope) }, true);
      try {
        return result(await fn(args));
      } catch (e) {
        if (e instanceof AppError || e instanceof SecretRefusedError || e instanceof z.ZodError)
          return result({ error: e instanceof z.ZodError ? e.issues[0].message : e.message }, true);
        throw e;
      }
    };
  for (const name of MEMORY_TOOL_NAMES) {
    const d = MEMORY_TOOL_DEFINITIONS[name];
    if (!has(d.scope)) continue; // not listed: the key cannot use it
    server.registerTool(name, { description: d.description, inputSchema: d.args.shape }, async (args: unknown) => {
      const r = await runMemoryToolCall(tools, name, args);
      return result(r.result, !!r.result.error);
    });
  }
  if (has("memory:read"))
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
      if (!has("memory:read")) throw new AppError(lacksScope("memory:read"), 403);
      const profile = await loadProfile(u, 200);
      await sent(profile.memories.map((m) => m.id));
      const text = profile.memories.map((m) => `- ${m.text}${m.pinned ? " (pinned)" : ""}`).join("\n");
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: text || "(no memories yet)" }] };
    },
  );
  return server;
}
