// POST /v1/responses: OpenAI's Responses API over Mnemo's answer core (lib/api/responses.ts), streamed as server-sent
// events (`event: <type>` and `data: {…}`, as OpenAI sends them) or not. A key with "chat".
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { createResponse, createResponseStream, responseInput } from "@/lib/api/responses";
import { readJson } from "@/lib/http/route";
import { sseEvent, sseResponse } from "@/lib/api/sse";
import { v1Error, v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";

export const POST = v1Route("POST /v1/responses", async (request: Request) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const input = responseInput.parse(await readJson(request, 8_000_000));
  if (!input.stream)
    return Response.json(await createResponse(caller, input), { headers: { "cache-control": "no-store" } });
  const events = await createResponseStream(caller, input);
  return sseResponse(events, {
    frame: (e) => sseEvent((e as { type: string }).type, e),
    error: async (e) => {
      const { error } = await v1Error(e, "v1 responses stream").json();
      return sseEvent("error", { type: "error", code: error.type, message: error.message, param: null });
    },
  });
});
