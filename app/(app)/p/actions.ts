"use server";
// Project actions, through userAction (lib/http/action.ts): the session is checked, the arguments validated, and
// each works only on the signed-in user's projects, threads and memories (another user's id is "not found").
import { z } from "zod";
import { revalidatePath } from "next/cache";
import { userAction } from "@/lib/http/action";
import { threadIdSchema } from "@/lib/chat/threads";
import {
  createProject,
  deleteProject,
  listProjects,
  moveMemory,
  moveThread,
  projectChanges,
  projectIdSchema,
  projectInput,
  updateProject,
} from "@/lib/projects/projects";

export const listProjectsAction = userAction(z.tuple([]), (_args, ctx) => listProjects(ctx));

export const createProjectAction = userAction(z.tuple([projectInput]), ([input], ctx) => createProject(ctx, input));

export const updateProjectAction = userAction(
  z.tuple([projectChanges]),
  async ([input], ctx) => void (await updateProject(ctx, input)),
);

export const deleteProjectAction = userAction(
  z.tuple([projectIdSchema]),
  async ([id], ctx) => void (await deleteProject(ctx, id)),
);

/** Moves a thread into a project, or out of one (null). */
export const moveThreadAction = userAction(
  z.tuple([threadIdSchema, projectIdSchema.nullable()]),
  async ([threadId, projectId], ctx) => void (await moveThread(ctx, threadId, projectId)),
);

/** Moves a memory into a project, or into general memory (null). */
export const moveMemoryAction = userAction(
  z.tuple([z.string().trim().min(1).max(64), projectIdSchema.nullable()]),
  async ([memoryId, projectId], ctx) => {
    await moveMemory(ctx, memoryId, projectId);
    revalidatePath("/settings/memory");
  },
);
