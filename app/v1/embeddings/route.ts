// POST /v1/embeddings: OpenAI's embeddings from Mnemo's embedding model (lib/api/embeddings.ts). A key with "chat".
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { createEmbeddings, embeddingInput } from "@/lib/api/embeddings";
import { readJson } from "@/lib/http/route";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";

export const POST = v1Route("POST /v1/embeddings", async (request: Request) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const input = embeddingInput.parse(await readJson(request, 8_000_000));
  return Response.json(await createEmbeddings(caller, input), { headers: { "cache-control": "no-store" } });
});
