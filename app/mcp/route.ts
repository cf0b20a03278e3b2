// /mcp: Mnemo's memory over the Model Context Protocol (Streamable HTTP, stateless: each request gets its own
// server and transport, so any app instance answers any request). Authenticated by a personal API key in
// `Authorization: Bearer`; the tools check the key's scopes (lib/api/mcp.ts). A missing or bad key is a 401 with
// `WWW-Authenticate: Bearer` and the reason, as MCP clients expect; GET (a server-sent event stream in the protocol's
// stateful mode) is 405, so a client that would wait on it learns at once that there is none.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { mnemoMcpServer } from "@/lib/api/mcp";
import { v1Route } from "@/lib/api/v1-route";
import { UnauthorizedError } from "@/lib/errors";

export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<Response> {
  let caller;
  try {
    caller = await authenticateKey(await getDb(), request, null);
  } catch (e) {
    if (e instanceof UnauthorizedError) return unauthorized(e.message);
    throw e;
  }
  const server = mnemoMcpServer(caller);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  return transport.handleRequest(request);
}

/** The bearer-token refusal of RFC 6750, in the shape the MCP SDK's own servers send. */
function unauthorized(message: string): Response {
  const quoted = message.replace(/["\\]/g, "'");
  return Response.json(
    { error: "invalid_token", error_description: message },
    {
      status: 401,
      headers: {
        "www-authenticate": `Bearer realm="Mnemo", error="invalid_token", error_description="${quoted}"`,
        "cache-control": "no-store",
      },
    },
  );
}

function noEventStream(): Response {
  return Response.json(
    {
      jsonrpc: "2.0",
      error: { code: -32000, message: "Method not allowed: Mnemo's MCP server is stateless; POST JSON-RPC requests." },
      id: null,
    },
    { status: 405, headers: { allow: "POST, DELETE", "cache-control": "no-store" } },
  );
}

export const POST = v1Route("POST /mcp", handle);
export const GET = noEventStream;
export const DELETE = v1Route("DELETE /mcp", handle);
