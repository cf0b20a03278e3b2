"use server";
// Project actions, through userAction (lib/http/action.ts): the session is checked, the arguments validated, and
// each works only on the signed-in user's projects, threads and memories (another user's id is "not found").
import { cancelInvite } from "@/lib/projects/invites";
import { z } from "zod";
import { revalidatePath } from "next/cache";
import { userAction } from "@/lib/http/action";
import { threadIdSchema } from "@/lib/chat/threads";
import {
  createProject,
  deleteProject,
  listAllProjects,
  projectChanges,
  projectIdSchema,
  projectInput,
  updateProject,
} from "@/lib/projects/projects";
import { projectAccess } from "@/lib/projects/access";
import {
  changeRole,
  createSharedProject,
  inviteInput,
  inviteMember,
  leaveProject,
  memberRoleSchema,
  removeMember,
  transferOwnership,
} from "@/lib/projects/members";
import {
  addProjectMemory,
  forgetProjectMemory,
  projectMemoryText,
  reviewProjectMemory,
  setProjectReview,
  settleProjectConflict,
} from "@/lib/projects/project-memory";
import { settleInput } from "@/lib/memory/conflicts";
import { moveChat, moveMemoryTo, shareExistingProject } from "@/lib/projects/share-existing";

export const listProjectsAction = userAction(z.tuple([]), (_args, ctx) => listAllProjects(ctx));

export const createProjectAction = userAction(z.tuple([projectInput]), ([input], ctx) => createProject(ctx, input));

export const updateProjectAction = userAction(
  z.tuple([projectChanges]),
  async ([input], ctx) => void (await updateProject(ctx, input)),
);

export const deleteProjectAction = userAction(
  z.tuple([projectIdSchema]),
  async ([id], ctx) => void (await deleteProject(ctx, id)),
);

/** Moves a thread into a project (a shared one: re-sealed under its key, for its members), or out of one (null). */
export const moveThreadAction = userAction(
  z.tuple([threadIdSchema, projectIdSchema.nullable()]),
  async ([threadId, projectId], ctx) => void (await moveChat(ctx, threadId, projectId)),
);

/** Moves a memory into a project (a shared one: re-sealed under its key, for its members), or into general memory. */
export const moveMemoryAction = userAction(
  z.tuple([z.string().trim().min(1).max(64), projectIdSchema.nullable()]),
  async ([memoryId, projectId], ctx) => {
    await moveMemoryTo(ctx, memoryId, projectId);
    revalidatePath("/settings/memory");
  },
);

// ---- Shared projects: each action asks lib/projects/access.ts for the role it needs before anything runs. ----

const personId = z.string().trim().min(1).max(64);

/** Starts a shared project, the user its owner. */
export const createSharedProjectAction = userAction(z.tuple([projectInput]), ([input], ctx) =>
  createSharedProject(ctx, input),
);

/**
 * Adds someone with an account here as an editor or viewer (editors and the owner); for an address without one, the
 * invitation waits (lib/projects/invites.ts). Returns what to tell the inviter.
 */
export const inviteMemberAction = userAction(z.tuple([projectIdSchema, inviteInput]), async ([id, input], ctx) => {
  const said = await inviteMember(await projectAccess(ctx, id, "write"), input);
  revalidatePath(`/p/${id}`);
  return said;
});

/** Withdraws an invitation still waiting for its address (editors and the owner). */
export const cancelInviteAction = userAction(
  z.tuple([projectIdSchema, inviteInput.shape.email]),
  async ([id, email], ctx) => {
    await cancelInvite(await projectAccess(ctx, id, "write"), email);
    revalidatePath(`/p/${id}`);
  },
);

/** The owner makes a member an editor or a viewer. */
export const changeRoleAction = userAction(
  z.tuple([projectIdSchema, personId, memberRoleSchema]),
  async ([id, userId, role], ctx) => {
    await changeRole(await projectAccess(ctx, id, "own"), userId, role);
    revalidatePath(`/p/${id}`);
  },
);

/** The owner gives the project to another member (and stays an editor). */
export const transferOwnershipAction = userAction(z.tuple([projectIdSchema, personId]), async ([id, userId], ctx) => {
  await transferOwnership(await projectAccess(ctx, id, "own"), userId);
  revalidatePath(`/p/${id}`);
});

/** The owner removes a member. */
export const removeMemberAction = userAction(z.tuple([projectIdSchema, personId]), async ([id, userId], ctx) => {
  await removeMember(await projectAccess(ctx, id, "own"), userId);
  revalidatePath(`/p/${id}`);
});

/** A member leaves the project. */
export const leaveProjectAction = userAction(z.tuple([projectIdSchema]), async ([id], ctx) => {
  await leaveProject(await projectAccess(ctx, id, "read"));
});

/** The owner decides whether the chats of people who leave stay in the project. */
export const setKeepLeaversChatsAction = userAction(
  z.tuple([projectIdSchema, z.boolean()]),
  async ([id, keep], ctx) => {
    const a = await projectAccess(ctx, id, "own");
    await a.content.db.project.update({ where: { id: a.projectId }, data: { keepLeaversChats: keep } });
    revalidatePath(`/p/${id}`);
  },
);

/** The owner decides whether what the project learns waits for an editor's approval. */
export const setProjectReviewAction = userAction(z.tuple([projectIdSchema, z.boolean()]), async ([id, review], ctx) => {
  await setProjectReview(await projectAccess(ctx, id, "own"), review);
  revalidatePath(`/p/${id}`);
});

/** An editor or the owner adds a memory to the project by hand. */
export const addProjectMemoryAction = userAction(
  z.tuple([projectIdSchema, projectMemoryText]),
  async ([id, text], ctx) => {
    await addProjectMemory(await projectAccess(ctx, id, "write"), text);
    revalidatePath(`/p/${id}`);
  },
);

/** An editor or the owner forgets one of the project's memories. */
export const forgetProjectMemoryAction = userAction(
  z.tuple([projectIdSchema, personId]),
  async ([id, memoryId], ctx) => {
    await forgetProjectMemory(await projectAccess(ctx, id, "write"), memoryId);
    revalidatePath(`/p/${id}`);
  },
);

/** An editor or the owner approves (true) or rejects a memory waiting for review. */
export const reviewProjectMemoryAction = userAction(
  z.tuple([projectIdSchema, personId, z.boolean()]),
  async ([id, memoryId, approve], ctx) => {
    await reviewProjectMemory(await projectAccess(ctx, id, "write"), memoryId, approve);
    revalidatePath(`/p/${id}`);
  },
);

/** An editor or the owner decides between two of the project's memories that contradict each other. */
export const settleProjectConflictAction = userAction(
  z.tuple([projectIdSchema, settleInput]),
  async ([id, input], ctx) => {
    await settleProjectConflict(await projectAccess(ctx, id, "write"), input);
    revalidatePath(`/p/${id}`);
  },
);

/** The owner of a project of their own makes it shared: its chats and memories move under the project's own key. */
export const shareProjectAction = userAction(z.tuple([projectIdSchema]), async ([id], ctx) => {
  await shareExistingProject(ctx, id);
  revalidatePath(`/p/${id}`);
});
