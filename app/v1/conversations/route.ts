// POST /v1/conversations: a new conversation, a Mnemo thread of the key's user (lib/api/conversations.ts).
import { getDb } from "@/lib/db/client";
import { authenticateKey } from "@/lib/keys/api-keys";
import { createConversation, createConversationInput } from "@/lib/api/conversations";
import { readJson } from "@/lib/http/route";
import { v1Route } from "@/lib/api/v1-route";

export const dynamic = "force-dynamic";

export const POST = v1Route("POST /v1/conversations", async (request: Request) => {
  const caller = await authenticateKey(await getDb(), request, "chat");
  const input = createConversationInput.parse(await readJson(request, 8_000_000));
  return Response.json(await createConversation(caller, input));
});
