import { NewChat } from "@/components/chat/new-chat";
import { getDb } from "@/lib/db/client";
import { chatSetup } from "@/lib/chat/chat-setup";
import { pageUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export default async function NewChatPage() {
  await pageUser();
  const setup = await chatSetup(await getDb(), {});
  // Tells a fresh "New chat" from the one already shown (a server component renders once per request).
  // eslint-disable-next-line react-hooks/purity -- a server component: one render per request, never re-rendered
  const visit = Date.now();
  return <NewChat visit={visit} {...setup} />;
}
