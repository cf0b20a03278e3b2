// POST /v1/responses/compact: a conversation compacted into Mnemo's rolling summary (lib/api/compact.ts).
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { compactInput, compactResponse } from "@/lib/api/compact";
import { readJson } from "@/lib/http/route";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";

export const POST = v1Route("POST /v1/responses/compact", async (request: Request) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const input = compactInput.parse(await readJson(request, 8_000_000));
  return Response.json(await compactResponse(caller, input), { headers: { "cache-control": "no-store" } });
});
