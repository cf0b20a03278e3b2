// Inviting someone to a shared project who has no account here yet. The invitation waits for the address; the account
// later made for it joins with the role, but only when the registration mode vouches that its owner is the person
// invited: an administrator's invitation (invite mode) or account (closed mode), or, in any mode, an address a sign-in
// provider verified. In open mode anyone may register any address without proving it, so such an account does not
// take the place: the invitation keeps waiting, and the project's people invite them again once they have signed in.
import type { Db } from "@/lib/db/types";
import { registrationMode, type RegistrationMode } from "@/lib/auth/registration";
import { assertMay, type ProjectAccess } from "./access";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

/** How long an invitation waits for its address. */
export const PROJECT_INVITE_DAYS = 30;

/** What the inviter is told, by registration mode (an administrator may also send an invitation to register). */
const WAITING: Record<RegistrationMode, string> = {
  open:
    "They can create an account on this server. They join the project when they sign in with a provider that " +
    "confirms their address; if they register with a password, invite them again once they have.",
  invite:
    "Registration here is by invitation: ask an administrator to invite them. They join the project when their " +
    "account is made.",
  closed: "Accounts here are made by an administrator: ask one to create theirs. They join the project then.",
};

export type ProjectInviteView = { email: string; role: "editor" | "viewer"; expiresAt: string };

/** Records (or renews) an invitation for an address without an account; returns what to tell the inviter. */
export async function inviteAhead(a: ProjectAccess, email: string, role: "editor" | "viewer"): Promise<string> {
  assertMay(a, "write");
  const { db, actorId } = a.content;
  const expiresAt = new Date(Date.now() + PROJECT_INVITE_DAYS * 86_400_000);
  await db.projectInvite.upsert({
    where: { projectId_email: { projectId: a.projectId, email } },
    create: { projectId: a.projectId, email, role, invitedById: actorId, expiresAt },
    update: { role, invitedById: actorId, expiresAt },
  });
  return `No one signs in here as ${email} yet: the invitation waits for ${PROJECT_INVITE_DAYS} days. ${WAITING[registrationMode()]}`;
}

/** The project's invitations still waiting. */
export async function listInvites(a: ProjectAccess): Promise<ProjectInviteView[]> {
  const rows = await a.content.db.projectInvite.findMany({
    where: { projectId: a.projectId, expiresAt: { gt: new Date() } },
    orderBy: { createdAt: "asc" },
    select: { email: true, role: true, expiresAt: true },
  });
  return rows.map((r) => ({
    email: r.email,
    role: r.role as "editor" | "viewer",
    expiresAt: r.expiresAt.toISOString(),
  }));
}

/** Withdraws an invitation (those who may invite may). */
export async function cancelInvite(a: ProjectAccess, email: string): Promise<void> {
  assertMay(a, "write");
  await a.content.db.projectInvite.deleteMany({ where: { projectId: a.projectId, email: email.trim().toLowerCase() } });
}

/**
 * In the transaction that creates an account: the projects waiting for its address, joined when the mode vouches
 * for it (see the top of this file); used invitations are removed.
 */
export async function joinInvitedProjects(tx: Tx, user: { id: string; email: string; emailVerified?: Date | null }) {
  const vouched = registrationMode() !== "open" || !!user.emailVerified;
  if (!vouched) return;
  const waiting = await tx.projectInvite.findMany({
    where: { email: user.email.toLowerCase(), expiresAt: { gt: new Date() }, project: { shared: true } },
  });
  for (const w of waiting) {
    await tx.projectMember.create({ data: { projectId: w.projectId, userId: user.id, role: w.role } });
    await tx.projectEvent.create({
      data: { projectId: w.projectId, actorId: w.invitedById, subjectId: user.id, kind: "joined", role: w.role },
    });
  }
  await tx.projectInvite.deleteMany({ where: { email: user.email.toLowerCase() } });
}
