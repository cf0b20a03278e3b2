// GET and DELETE /v1/conversations/{id} (deleting it deletes its thread).
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { deleteConversation, retrieveConversation } from "@/lib/api/conversations";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";
type Ctx = { params: Promise<{ id: string }> };

export const GET = v1Route("GET /v1/conversations/{id}", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  return Response.json(await retrieveConversation(caller, (await ctx.params).id));
});

export const DELETE = v1Route("DELETE /v1/conversations/{id}", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  return Response.json(await deleteConversation(caller, (await ctx.params).id));
});
