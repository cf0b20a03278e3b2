// GET /v1/models: the chat models the admin lets people use (lib/llm/models.ts), the default first, for OpenAI
// clients that list models first (Open WebUI, LibreChat). Any key of the user's with the "chat" scope.
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { resolveConnectionCached } from "@/lib/llm/connection";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";

export const GET = v1Route("GET /v1/models", async (request: Request) => {
  const db = await getDb();
  await authenticateKey(db, request, "chat");
  const state = await resolveConnectionCached(db);
  const data = state.configured
    ? state.models.map((m) => ({ id: m.id, object: "model", created: 0, owned_by: "mnemo" }))
    : [];
  return Response.json({ object: "list", data }, { headers: { "cache-control": "no-store" } });
});
