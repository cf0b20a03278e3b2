// /mcp: Mnemo's memory over the Model Context Protocol (Streamable HTTP, stateless: each request gets its own
// server and transport, so any app instance answers any request). Authenticated by a personal API key in
// `Authorization: Bearer`; the tools check the key's scopes (lib/api/mcp.ts).
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { mnemoMcpServer } from "@/lib/api/mcp";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<Response> {
  const caller = await authenticateKey(await getDb(), request, null);
  const server = mnemoMcpServer(caller);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  return transport.handleRequest(request);
}

export const POST = v1Route("POST /mcp", handle);
export const GET = v1Route("GET /mcp", handle);
export const DELETE = v1Route("DELETE /mcp", handle);
