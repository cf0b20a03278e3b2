import { NotFoundError } from "@/lib/errors";
import { userContext } from "@/lib/user-context";
import { notFound } from "next/navigation";
import { ChatView } from "@/components/chat/chat-view";
import { getDb } from "@/lib/db/client";
import { chatSetup } from "@/lib/chat/chat-setup";
import { pageUser } from "@/lib/auth/session";
import { threadView } from "@/lib/chat/threads";
import { threadAccess } from "@/lib/projects/access";

export const dynamic = "force-dynamic";

export default async function ThreadPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await pageUser();
  const { id } = await params;
  const db = await getDb();
  let view;
  try {
    // The user's own chat, or a shared project's they may read (lib/projects/access.ts).
    const access = await threadAccess(await userContext(db, user.id), id.slice(0, 64), "read");
    view = await threadView(access.content, id.slice(0, 64), access);
  } catch (e) {
    if (e instanceof NotFoundError) notFound();
    throw e;
  }
  const setup = await chatSetup(db, { thread: view.thread.model, project: view.thread.project?.model });
  return <ChatView key={id} initial={view} {...setup} />;
}
