import { notFound } from "next/navigation";
import { NotFoundError } from "@/lib/errors";
import { userContext } from "@/lib/user-context";
import { getDb } from "@/lib/db/client";
import { pageUser } from "@/lib/auth/session";
import { getProject } from "@/lib/projects/projects";
import { listThreads } from "@/lib/chat/threads";
import { ProjectView } from "@/components/projects/project-view";
import { chatSetup } from "@/lib/chat/chat-setup";

export const dynamic = "force-dynamic";

export default async function ProjectPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await pageUser();
  const { id } = await params;
  const u = await userContext(await getDb(), user.id);
  const project = await getProject(u, id.slice(0, 64)).catch((e) => {
    if (e instanceof NotFoundError) notFound();
    throw e;
  });
  const [{ threads }, { models }] = await Promise.all([
    listThreads(u, { project: project.id, limit: 100 }),
    chatSetup(u.db),
  ]);
  return <ProjectView key={project.id} project={project} threads={threads} models={models} />;
}
