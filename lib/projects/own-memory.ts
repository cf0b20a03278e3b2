// A member's own memory in a shared project. The project's rows see the project's memories alone; in the "shared"
// memory mode a member's own general memories (and their general chats) also help that member's own turns, and only
// theirs: they are read from the member's own account with the member's key, go into that turn's prompt in a section
// of their own, and their uses and sends are recorded on the member's account. The project never stores them, other
// members never see them listed, and the project's learning never reads them (it learns from what its members say).
import type { ProjectMemoryMode } from "@/lib/projects/scope";
import { GENERAL_SCOPE } from "@/lib/projects/scope";
import { inSharedProject, userContext, type UserContext } from "@/lib/user-context";

/** The share of the memory budget a member's own memory may take in a "shared" mode shared project. */
export const OWN_SHARE = 1 / 3;

/**
 * The member's own context in general scope, for recall in their own turn; null when the turn is not a member's in
 * a shared project, the project's mode keeps to its own memories, or the member only reads (a viewer asks nothing).
 * Private memories come only when the project's context may read them (the model server is local).
 */
export async function ownMemoryContext(
  u: UserContext,
  mode: ProjectMemoryMode | null | undefined,
): Promise<UserContext | null> {
  if (!inSharedProject(u) || mode !== "shared" || u.readOnly) return null;
  return userContext(u.db, u.actorId, { ...GENERAL_SCOPE, privateOk: !!u.scope.privateOk });
}

/** The member's own context, whatever the mode (to show them the uses of their own memories). */
export function actorContext(u: UserContext): Promise<UserContext | null> {
  return inSharedProject(u) ? userContext(u.db, u.actorId) : Promise.resolve(null);
}

/** The project's memory mode, for a context on a shared project's rows (null: not one). */
export async function sharedProjectMode(u: UserContext): Promise<ProjectMemoryMode | null> {
  if (!inSharedProject(u) || !u.scope.projectId) return null;
  const p = await u.db.project.findFirst({
    where: { id: u.scope.projectId, userId: u.userId },
    select: { memoryMode: true },
  });
  return p?.memoryMode ?? null;
}
