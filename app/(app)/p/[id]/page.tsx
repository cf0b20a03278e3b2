import { notFound } from "next/navigation";
import { NotFoundError } from "@/lib/errors";
import { userContext } from "@/lib/user-context";
import { getDb } from "@/lib/db/client";
import { pageUser } from "@/lib/auth/session";
import { getProject } from "@/lib/projects/projects";
import { listThreads } from "@/lib/chat/threads";
import { ProjectView } from "@/components/projects/project-view";
import { chatSetup } from "@/lib/chat/chat-setup";
import { projectAccess } from "@/lib/projects/access";
import { listMembers, projectHistory } from "@/lib/projects/members";
import { listInvites } from "@/lib/projects/invites";
import { projectConflicts, projectMemories } from "@/lib/projects/project-memory";
import type { ProjectSharing } from "@/components/projects/project-people";

export const dynamic = "force-dynamic";

export default async function ProjectPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await pageUser();
  const { id } = await params;
  const me = await userContext(await getDb(), user.id);
  // Its owner's, or a shared project's the user belongs to (lib/projects/access.ts); anyone else: not found.
  const found = await Promise.all([getProject(me, id.slice(0, 64)), projectAccess(me, id.slice(0, 64), "read")]).catch(
    (e) => {
      if (e instanceof NotFoundError) notFound();
      throw e;
    },
  );
  const [project, access] = found;
  const u = access.content;
  const [{ threads }, { models }, sharing] = await Promise.all([
    listThreads(u, { project: project.id, limit: 100 }),
    chatSetup(u.db),
    project.shared ? sharingOf(access) : Promise.resolve(null),
  ]);
  return <ProjectView key={project.id} project={project} threads={threads} models={models} sharing={sharing} />;
}

async function sharingOf(a: Awaited<ReturnType<typeof projectAccess>>): Promise<ProjectSharing> {
  const [members, invites, history, memories, conflicts, p, settings] = await Promise.all([
    listMembers(a),
    a.role === "viewer" ? [] : listInvites(a),
    projectHistory(a),
    projectMemories(a),
    projectConflicts(a),
    a.content.db.project.findUnique({ where: { id: a.projectId }, select: { keepLeaversChats: true } }),
    a.content.settings(),
  ]);
  return {
    role: a.role,
    me: a.content.actorId,
    members,
    invites,
    history,
    memories,
    conflicts,
    keepLeaversChats: !!p?.keepLeaversChats,
    review: settings.review,
  };
}
