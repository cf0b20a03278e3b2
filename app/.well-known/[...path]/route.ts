// /.well-known/*: MCP clients look for OAuth metadata here after a 401 (RFC 9728, RFC 8414). Mnemo authenticates MCP
// by personal API key, not OAuth: a JSON 404 that says so, never the sign-in page's HTML.
export const dynamic = "force-dynamic";

export function GET(): Response {
  return Response.json(
    {
      error: "not_found",
      error_description:
        "Mnemo does not offer OAuth. Make an API key under Settings → API keys and send it as Authorization: Bearer.",
    },
    { status: 404, headers: { "cache-control": "no-store" } },
  );
}
