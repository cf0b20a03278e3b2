import { notFound, redirect } from "next/navigation";
import { NotFoundError } from "@/lib/errors";
import { userContext } from "@/lib/user-context";
import { NewChat } from "@/components/chat/new-chat";
import { getDb } from "@/lib/db/client";
import { chatSetup } from "@/lib/chat/chat-setup";
import { pageUser } from "@/lib/auth/session";
import { getProject } from "@/lib/projects/projects";

export const dynamic = "force-dynamic";

/** A new chat in a project: its first message makes the thread there. */
export default async function NewProjectChatPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await pageUser();
  const { id } = await params;
  const db = await getDb();
  let project;
  try {
    const me = await userContext(db, user.id);
    project = await getProject(me, id.slice(0, 64));
    // A viewer reads the project's chats but starts none (lib/projects/access.ts).
    if (project.role === "viewer") redirect(`/p/${project.id}`);
  } catch (e) {
    if (e instanceof NotFoundError) notFound();
    throw e;
  }
  const setup = await chatSetup(db, { project: project.model });
  // eslint-disable-next-line react-hooks/purity -- a server component: one render per request, never re-rendered
  const visit = Date.now();
  return <NewChat visit={visit} project={{ id: project.id, name: project.name, shared: project.shared }} {...setup} />;
}
