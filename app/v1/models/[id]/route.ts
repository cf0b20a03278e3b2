// GET /v1/models/{id}: one of the models the admin lets people use (also "mnemo", the name the docs use, which
// means the default); any other id is a 404 in OpenAI's shape (code model_not_found).
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { resolveConnectionCached } from "@/lib/llm/connection";
import { modelForClient } from "@/lib/llm/models";
import { v1Route } from "@/lib/api/v1-route";
import { ModelNotFoundError } from "@/lib/errors";

export const dynamic = "force-dynamic";

export const GET = v1Route(
  "GET /v1/models/{id}",
  async (request: Request, ctx: { params: Promise<{ id: string }> }) => {
    const db = await getDb();
    await authenticateKey(db, request, "chat");
    const { id } = await ctx.params;
    const state = await resolveConnectionCached(db);
    if (!state.configured) throw new ModelNotFoundError(id);
    modelForClient(state.models, id);
    return Response.json(
      { id, object: "model", created: 0, owned_by: "mnemo" },
      { headers: { "cache-control": "no-store" } },
    );
  },
);
