// GET (list, with limit, order and after) and POST (add) /v1/conversations/{id}/items.
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { addItems, addItemsInput, listItems, listItemsQuery } from "@/lib/api/conversations";
import { readJson } from "@/lib/http/route";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";
type Ctx = { params: Promise<{ id: string }> };

export const GET = v1Route("GET /v1/conversations/{id}/items", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const q = listItemsQuery.parse(Object.fromEntries(new URL(request.url).searchParams));
  return Response.json(await listItems(caller, (await ctx.params).id, q));
});

export const POST = v1Route("POST /v1/conversations/{id}/items", async (request: Request, ctx: Ctx) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const input = addItemsInput.parse(await readJson(request, 8_000_000));
  return Response.json(await addItems(caller, (await ctx.params).id, input));
});
