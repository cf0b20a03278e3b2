// GET and DELETE /v1/conversations/{id}/items/{item_id}.
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { deleteItem, retrieveItem } from "@/lib/api/conversations";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";
type Ctx = { params: Promise<{ id: string; itemId: string }> };

export const GET = v1Route("GET /v1/conversations/{id}/items/{item_id}", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const { id, itemId } = await ctx.params;
  return Response.json(await retrieveItem(caller, id, itemId));
});

export const DELETE = v1Route("DELETE /v1/conversations/{id}/items/{item_id}", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const { id, itemId } = await ctx.params;
  return Response.json(await deleteItem(caller, id, itemId));
});
