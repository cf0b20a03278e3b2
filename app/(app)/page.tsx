import { ChatView } from "@/components/chat/chat-view";
import { getDb } from "@/lib/db/client";
import { chatSetup } from "@/lib/chat/chat-setup";
import { pageUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export default async function NewChatPage() {
  await pageUser();
  const setup = await chatSetup(await getDb(), {});
  // The key forces a fresh chat each time "New chat" is opened (a server component renders once per request).
  // eslint-disable-next-line react-hooks/purity -- a server component: one render per request, never re-rendered
  const visit = Date.now();
  return <ChatView key={visit} initial={null} {...setup} />;
}
