// GET and DELETE /v1/responses/{id}: a stored response (its answer in a thread of the key's user).
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { deleteResponse, retrieveResponse } from "@/lib/api/responses";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";
type Ctx = { params: Promise<{ id: string }> };

export const GET = v1Route("GET /v1/responses/{id}", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  return Response.json(await retrieveResponse(caller, (await ctx.params).id), {
    headers: { "cache-control": "no-store" },
  });
});

export const DELETE = v1Route("DELETE /v1/responses/{id}", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  return Response.json(await deleteResponse(caller, (await ctx.params).id));
});
