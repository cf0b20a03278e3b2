// Shared projects' people: starting a shared project, inviting, roles, ownership, leaving and removing, and the
// project's history. Who may call what is decided by lib/projects/access.ts before any of these run (each takes the
// access it was given); these keep the membership consistent: one owner, always, and a departure takes with it what
// the person contributed that nobody else confirmed.
import crypto from "node:crypto";
import { z } from "zod";
import type { Db } from "@/lib/db/types";
import { AppError, ForbiddenError, NotFoundError } from "@/lib/errors";
import { offeredModel } from "@/lib/llm/connection";
import { userContext, type UserContext } from "@/lib/user-context";
import { projectInput } from "./projects";
import { assertMay, type ProjectAccess, type ProjectRole } from "./access";
import { inviteAhead } from "./invites";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

export const memberRoleSchema = z.enum(["editor", "viewer"]);
export const inviteInput = z.object({
  email: z.string().trim().toLowerCase().email("Type the email address they sign in with.").max(320),
  role: memberRoleSchema,
});

export type ProjectMemberView = {
  userId: string;
  name: string | null;
  email: string;
  role: ProjectRole;
  joinedAt: string;
  you: boolean;
};

/**
 * Starts a shared project: its own account (whose key seals its chats and memories), the project under it, and
 * the user as its owner, in one transaction.
 */
export async function createSharedProject(u: UserContext, input: z.input<typeof projectInput>) {
  const f = projectInput.parse(input);
  const model = await offeredModel(u.db, f.model);
  const accountId = await newProjectAccount(u.db);
  // The project's key is made when its account's cipher is first asked for; the project row follows, sealed with it.
  // Should that fail, the account goes (it holds nothing yet).
  const content = await userContext(u.db, accountId, undefined, u.actorId);
  try {
    return await u.db.$transaction(async (tx) => {
      const p = await tx.project.create({
        data: {
          userId: accountId,
          shared: true,
          name: content.cipher.seal(f.name),
          instructions: content.cipher.seal(f.instructions),
          // Members' own memories help their own turns only when the owner chose so (lib/projects/own-memory.ts).
          memoryMode: input.memoryMode ?? "project_only",
          model,
        },
        select: { id: true },
      });
      await tx.projectMember.create({ data: { projectId: p.id, userId: u.actorId, role: "owner" } });
      await tx.projectEvent.create({
        data: { projectId: p.id, actorId: u.actorId, subjectId: u.actorId, kind: "joined", role: "owner" },
      });
      return p;
    });
  } catch (e) {
    await u.db.user.delete({ where: { id: accountId } }).catch(() => undefined);
    throw e;
  }
}

/** A shared project's own account: it holds the project's rows and key; nobody signs in as it. */
export async function newProjectAccount(db: Db): Promise<string> {
  const made = await db.user.create({
    data: { kind: "project", email: `project-${crypto.randomUUID()}@projects.mnemo.invalid` },
    select: { id: true },
  });
  return made.id;
}

/** The project's members, the owner first, then by when they joined. */
export async function listMembers(a: ProjectAccess): Promise<ProjectMemberView[]> {
  const rows = await a.content.db.projectMember.findMany({
    where: { projectId: a.projectId },
    select: { userId: true, role: true, joinedAt: true, user: { select: { name: true, email: true } } },
    orderBy: [{ joinedAt: "asc" }, { userId: "asc" }],
  });
  const order = (r: ProjectRole) => (r === "owner" ? 0 : 1);
  return rows
    .sort((x, y) => order(x.role) - order(y.role))
    .map((r) => ({
      userId: r.userId,
      name: r.user.name,
      email: r.user.email,
      role: r.role,
      joinedAt: r.joinedAt.toISOString(),
      you: r.userId === a.content.actorId,
    }));
}

/**
 * Adds someone with an account here as an editor or viewer (an editor or the owner may); for an address without
 * one, the invitation waits (lib/projects/invites.ts). Returns what to tell the inviter.
 */
export async function inviteMember(a: ProjectAccess, input: z.input<typeof inviteInput>): Promise<string> {
  if (!a.shared) throw new AppError("Share the project first.", 409);
  assertMay(a, "write");
  const f = inviteInput.parse(input);
  const { db, actorId } = a.content;
  const person = await db.user.findFirst({
    where: { email: f.email, kind: "person", disabled: false },
    select: { id: true },
  });
  if (!person) return inviteAhead(a, f.email, f.role);
  await db.$transaction(async (tx) => {
    const had = await tx.projectMember.findUnique({
      where: { projectId_userId: { projectId: a.projectId, userId: person.id } },
    });
    if (had) throw new AppError(`${f.email} is already a member (${had.role}).`, 409);
    await tx.projectMember.create({ data: { projectId: a.projectId, userId: person.id, role: f.role } });
    await tx.projectInvite.deleteMany({ where: { projectId: a.projectId, email: f.email } });
    await tx.projectEvent.create({
      data: { projectId: a.projectId, actorId, subjectId: person.id, kind: "joined", role: f.role },
    });
  });
  return `${f.email} can now open the project.`;
}

/** The owner makes a member an editor or a viewer (ownership moves with `transferOwnership` only). */
export async function changeRole(a: ProjectAccess, userId: string, role: z.infer<typeof memberRoleSchema>) {
  if (a.role !== "owner") throw new ForbiddenError("Only the project's owner can change roles.");
  const { db, actorId } = a.content;
  await db.$transaction(async (tx) => {
    const m = await memberOf(tx, a.projectId, userId);
    if (m.role === "owner") throw new AppError("The owner's role changes by giving the project to someone else.", 409);
    if (m.role === role) return;
    await tx.projectMember.update({ where: { projectId_userId: { projectId: a.projectId, userId } }, data: { role } });
    await tx.projectEvent.create({ data: { projectId: a.projectId, actorId, subjectId: userId, kind: "role", role } });
  });
}

/** The owner gives the project to another member, and stays on as an editor. */
export async function transferOwnership(a: ProjectAccess, userId: string) {
  if (a.role !== "owner") throw new ForbiddenError("Only the project's owner can give it to someone else.");
  const { db, actorId } = a.content;
  if (userId === actorId) return;
  await db.$transaction(async (tx) => {
    await memberOf(tx, a.projectId, userId);
    await tx.projectMember.update({
      where: { projectId_userId: { projectId: a.projectId, userId: actorId } },
      data: { role: "editor" },
    });
    await tx.projectMember.update({
      where: { projectId_userId: { projectId: a.projectId, userId } },
      data: { role: "owner" },
    });
    await tx.projectEvent.create({
      data: { projectId: a.projectId, actorId, subjectId: userId, kind: "owner", role: "owner" },
    });
  });
}

async function memberOf(tx: Tx, projectId: string, userId: string) {
  const m = await tx.projectMember.findUnique({ where: { projectId_userId: { projectId, userId } } });
  if (!m) throw new NotFoundError("member");
  return m;
}

/** The owner removes a member: as a leave, with the project's choice about their chats. */
export async function removeMember(a: ProjectAccess, userId: string) {
  if (a.role !== "owner") throw new ForbiddenError("Only the project's owner can remove people.");
  if (userId === a.content.actorId)
    throw new AppError("You own this project: give it to someone else, or delete it.", 409);
  await a.content.db.$transaction(async (tx) => {
    await memberOf(tx, a.projectId, userId);
    await departure(tx, a.projectId, userId, { kind: "removed", actorId: a.content.actorId });
  });
}

/** A member leaves (the owner gives the project away or deletes it instead). */
export async function leaveProject(a: ProjectAccess) {
  if (a.role === "owner") throw new AppError("You own this project: give it to someone else first, or delete it.", 409);
  await a.content.db.$transaction((tx) =>
    departure(tx, a.projectId, a.content.actorId, { kind: "left", actorId: a.content.actorId }),
  );
}

/**
 * What goes when someone leaves a shared project (left, removed, or their account deleted): their membership; the
 * memories learned only from their chats or added by them (provenance decides: a memory another member's chat also
 * taught stays); and their chats, unless the project keeps leavers' chats (never for a deleted account).
 */
export async function departure(
  tx: Tx,
  projectId: string,
  userId: string,
  how: { kind: "left" | "removed" | "deleted"; actorId: string | null },
) {
  const p = await tx.project.findUnique({ where: { id: projectId }, select: { keepLeaversChats: true, userId: true } });
  if (!p) return;
  // Confirmed by someone else: another member taught the same memory again (lib/memory/store.ts mergeIntoDuplicate).
  await tx.$executeRaw`
    WITH theirs AS (
      SELECT m.id FROM "Memory" m
      LEFT JOIN "Thread" st ON st.id = m."sourceThreadId"
      WHERE m."projectId" = ${projectId}
        AND (m."addedById" = ${userId} OR (m."addedById" IS NULL AND st."authorId" = ${userId}))
        AND NOT EXISTS (
          SELECT 1 FROM "MemoryVersion" v WHERE v."memoryId" = m.id AND v."confirmedById" <> ${userId}
        )
    ), unlinked AS (
      UPDATE "Memory" SET "conflictWithId" = NULL WHERE "conflictWithId" IN (SELECT id FROM theirs)
    )
    DELETE FROM "Memory" WHERE id IN (SELECT id FROM theirs)
  `;
  // A chat only its author saw ("Only me") always goes with them: kept, it would be nobody's or everybody's.
  const kept = how.kind !== "deleted" && p.keepLeaversChats;
  await tx.thread.deleteMany({ where: { projectId, authorId: userId, ...(kept ? { private: true } : {}) } });
  // Files they uploaded here and never sent.
  await tx.attachment.deleteMany({ where: { userId: p.userId, addedById: userId, itemId: null } });
  await tx.projectMember.deleteMany({ where: { projectId, userId } });
  await tx.projectEvent.create({
    data: { projectId, actorId: how.kind === "deleted" ? null : how.actorId, subjectId: userId, kind: how.kind },
  });
}

/**
 * Before an account is deleted: it leaves each shared project it belongs to; a project it owns passes to the
 * longest-standing editor (else member), and one nobody else is in is deleted with its account and key.
 */
export async function leaveAllProjects(tx: Tx, userId: string) {
  const mine = await tx.projectMember.findMany({
    where: { userId },
    select: { projectId: true, role: true, project: { select: { userId: true } } },
  });
  for (const m of mine) {
    if (m.role === "owner") {
      const next = await tx.projectMember.findFirst({
        where: { projectId: m.projectId, NOT: { userId } },
        orderBy: [{ role: "asc" }, { joinedAt: "asc" }],
      });
      if (!next) {
        await tx.user.delete({ where: { id: m.project.userId } }); // the project, its rows and its key
        continue;
      }
      await tx.projectMember.update({
        where: { projectId_userId: { projectId: m.projectId, userId: next.userId } },
        data: { role: "owner" },
      });
      await tx.projectEvent.create({
        data: { projectId: m.projectId, actorId: null, subjectId: next.userId, kind: "owner", role: "owner" },
      });
    }
    await departure(tx, m.projectId, userId, { kind: "deleted", actorId: null });
  }
}

export type ProjectHistoryEntry = {
  at: string;
  kind: string;
  role: ProjectRole | null;
  actor: string | null;
  subject: string | null;
};

/** Who joined, left, was removed, changed role or became owner, newest first ("a former member": null). */
export async function projectHistory(a: ProjectAccess, limit = 50): Promise<ProjectHistoryEntry[]> {
  const rows = await a.content.db.projectEvent.findMany({
    where: { projectId: a.projectId },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take: limit,
    select: {
      at: true,
      kind: true,
      role: true,
      actor: { select: { name: true, email: true } },
      subject: { select: { name: true, email: true } },
    },
  });
  const who = (u: { name: string | null; email: string } | null) => (u ? (u.name ?? u.email) : null);
  return rows.map((r) => ({
    at: r.at.toISOString(),
    kind: r.kind,
    role: r.role,
    actor: who(r.actor),
    subject: who(r.subject),
  }));
}
