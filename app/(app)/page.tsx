import { ChatView } from "@/components/chat/chat-view";
import { getConfig } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { resolveConnection } from "@/lib/llm/connection";
import { pageUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export default async function NewChatPage() {
  await pageUser();
  const state = await resolveConnection(await getDb());
  // The key forces a fresh chat each time "New chat" is opened.
  return (
    <ChatView
      key={Date.now()}
      initial={null}
      modelMissing={state.configured ? null : state.reason}
      maxChars={getConfig().chat.maxMessageChars}
    />
  );
}
