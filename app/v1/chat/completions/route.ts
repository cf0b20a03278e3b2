// POST /v1/chat/completions: OpenAI's chat completions with the user's memory (lib/api/completions.ts), streamed
// (server-sent events, `data: {chat.completion.chunk}` lines, then `data: [DONE]`) or not. A key with "chat".
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { completeOnce, completeStreaming, completionInput } from "@/lib/api/completions";
import { readJson } from "@/lib/http/route";
import { sseData, sseResponse } from "@/lib/api/sse";
import { v1Error, v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";

export const POST = v1Route("POST /v1/chat/completions", async (request: Request) => {
  const db = await getDb();
  const caller = await authenticateKey(db, request, "chat");
  const input = completionInput.parse(await readJson(request, 8_000_000));
  if (!input.stream)
    return Response.json(await completeOnce(caller, input), { headers: { "cache-control": "no-store" } });
  const chunks = await completeStreaming(caller, input);
  return sseResponse(chunks, {
    frame: sseData,
    done: sseData("[DONE]"),
    error: async (e) => sseData(await v1Error(e, "v1 stream").json()),
  });
});
