// GET /v1/models/{id}: the model Mnemo answers with (also as "mnemo", the name the docs use: /v1/chat/completions
// answers with the configured model whatever it is asked for); any other id is a 404 in OpenAI's shape.
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { resolveConnectionCached } from "@/lib/llm/connection";
import { v1Route } from "@/lib/api/v1-route";
import { AppError } from "@/lib/errors";

export const dynamic = "force-dynamic";

export const GET = v1Route(
  "GET /v1/models/{id}",
  async (request: Request, ctx: { params: Promise<{ id: string }> }) => {
    const db = await getDb();
    await authenticateKey(db, request, "chat");
    const { id } = await ctx.params;
    const state = await resolveConnectionCached(db);
    if (!state.configured || (id !== state.connection.chatModel && id !== "mnemo"))
      throw new AppError(
        `The model '${id}' does not exist here: GET /v1/models lists the one Mnemo answers with.`,
        404,
      );
    return Response.json(
      { id, object: "model", created: 0, owned_by: "mnemo" },
      { headers: { "cache-control": "no-store" } },
    );
  },
);
