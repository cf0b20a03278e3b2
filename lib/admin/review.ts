// Admin review of users' data. An admin reaches another user's thread or
// memories only through these functions: each one first writes an audit row
// (admin, user, thread, reason, time) and only then reads, in one transaction,
// so there is no read without its record. A deployment setting
// (MNEMO_ADMIN_THREAD_ACCESS=off) turns the access off entirely.
import { openAttachment } from "@/lib/attachments/store";
import { z } from "zod";
import { userContext } from "@/lib/user-context";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { threadView, type ThreadView } from "@/lib/chat/threads";
import { listMemories } from "@/lib/memory/long-term";
import { AdminAccessDisabledError, NotFoundError } from "@/lib/errors";

export const reasonSchema = z
  .string({ error: "Give a reason for opening this user's data." })
  .trim()
  .min(5, "Give a reason of at least 5 characters: the user will see it.")
  .max(500, "A reason is at most 500 characters.");

let accessOverride: boolean | undefined;
/** Tests: turn the deployment setting on or off. */
export function setAdminAccessForTests(on: boolean | undefined) {
  accessOverride = on;
}
export const adminAccessEnabled = () => accessOverride ?? getConfig().adminThreadAccess;

/** Every kind of audited admin action (the audit page filters by these: one list, so none is left out). */
export const AUDIT_ACTIONS = [
  "thread.view",
  "attachment.view",
  "memory.view",
  "user.role",
  "user.disable",
  "user.enable",
  "user.delete",
  "user.limits",
  "user.password",
  "user.invite",
  "user.create",
  // A user's own personal API keys (lib/keys/api-keys.ts).
  "apikey.create",
  "apikey.revoke",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export async function recordAudit(
  db: Pick<Db, "auditLog">,
  e: {
    actorId: string | null;
    subjectUserId?: string | null;
    action: AuditAction;
    threadId?: string | null;
    reason?: string | null;
    detail?: object;
  },
) {
  return db.auditLog.create({
    data: {
      actorId: e.actorId,
      subjectUserId: e.subjectUserId ?? null,
      action: e.action,
      threadId: e.threadId ?? null,
      reason: e.reason ?? null,
      detail: e.detail,
    },
  });
}

/** A user's threads for the admin console: dates and sizes only (titles are content, shown when a thread is opened). */
export async function userThreadsForAdmin(db: Db, userId: string) {
  const rows = await db.thread.findMany({
    // Theirs, and the chats they started in shared projects (those rows are the project's).
    where: { OR: [{ userId }, { authorId: userId }], temporary: false },
    orderBy: { lastActivityAt: "desc" },
    select: { id: true, createdAt: true, lastActivityAt: true, archived: true, _count: { select: { items: true } } },
    take: 500,
  });
  return rows.map((t) => ({
    id: t.id,
    createdAt: t.createdAt.toISOString(),
    lastActivityAt: t.lastActivityAt.toISOString(),
    archived: t.archived,
    items: t._count.items,
  }));
}

/** Opens a user's thread read-only for an admin, after recording why. */
export async function reviewThread(
  db: Db,
  adminId: string,
  threadId: string,
  reason: string,
): Promise<ThreadView & { ownerId: string; members: SharedMembers }> {
  if (!adminAccessEnabled()) throw new AdminAccessDisabledError();
  const why = reasonSchema.parse(reason);
  const t = await db.thread.findUnique({
    where: { id: threadId },
    select: { userId: true, authorId: true, temporary: true, projectId: true },
  });
  if (!t || t.temporary) throw new NotFoundError("thread");
  // Whose words were read: a shared project's chat is its author's (the record is shown to them, not the project).
  const subject = t.authorId ?? t.userId;
  await recordAudit(db, { actorId: adminId, subjectUserId: subject, action: "thread.view", threadId, reason: why });
  const members = t.authorId && t.projectId ? await membersForAdmin(db, t.projectId) : null;
  const view = await threadView(await userContext(db, t.userId), threadId);
  // In a shared project the memories shown beside the answers were taught by members too: each of them is told of
  // the read as well, before anything is shown.
  if (t.authorId) {
    const shown = view.items.flatMap((i) => [...i.memoriesUsed, ...(i.alsoGiven ?? [])].map((m) => m.id));
    for (const teacher of await teachersOf(db, shown))
      if (teacher !== subject)
        await recordAudit(db, {
          actorId: adminId,
          subjectUserId: teacher,
          action: "thread.view",
          threadId,
          reason: why,
          detail: { memoriesTheyTaught: true },
        });
  }
  return { ...view, ownerId: subject, members };
}

/** The members who taught these shared-project memories: who added each, its chat's author, who confirmed it. */
async function teachersOf(db: Db, memoryIds: string[]): Promise<string[]> {
  if (!memoryIds.length) return [];
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    SELECT DISTINCT who AS id FROM (
      SELECT COALESCE(m."addedById", st."authorId") AS who FROM "Memory" m
        LEFT JOIN "Thread" st ON st.id = m."sourceThreadId" WHERE m.id = ANY(${memoryIds}::text[])
      UNION SELECT v."confirmedById" FROM "MemoryVersion" v WHERE v."memoryId" = ANY(${memoryIds}::text[])
    ) x WHERE who IS NOT NULL`;
  return rows.map((r) => r.id);
}

type SharedMembers = Array<{ email: string; name: string | null; role: string }> | null;

/** A shared project's members, for the admin reviewing one of its chats. */
async function membersForAdmin(db: Db, projectId: string): Promise<SharedMembers> {
  const rows = await db.projectMember.findMany({
    where: { projectId },
    orderBy: { joinedAt: "asc" },
    select: { role: true, user: { select: { email: true, name: true } } },
  });
  return rows.map((m) => ({ email: m.user.email, name: m.user.name, role: m.role }));
}

/**
 * A file of a conversation an admin is reviewing, after recording why (each file opened is its own record): a
 * document's text, or a picture as a data URL. Never the file served as itself to the admin's browser.
 */
export async function reviewAttachment(db: Db, adminId: string, attachmentId: string, reason: string) {
  if (!adminAccessEnabled()) throw new AdminAccessDisabledError();
  const why = reasonSchema.parse(reason);
  const a = await db.attachment.findUnique({
    where: { id: attachmentId },
    select: { userId: true, threadId: true, addedById: true, thread: { select: { temporary: true, authorId: true } } },
  });
  if (!a?.threadId || a.thread?.temporary) throw new NotFoundError("item");
  await recordAudit(db, {
    actorId: adminId,
    // A shared project's file is its chat's author's (the project's account is nobody to tell).
    subjectUserId: a.thread?.authorId ?? a.addedById ?? a.userId,
    action: "attachment.view",
    threadId: a.threadId,
    reason: why,
    detail: { attachmentId },
  });
  const file = await openAttachment(await userContext(db, a.userId), attachmentId);
  return {
    name: file.name,
    kind: file.kind,
    text: file.kind === "document" ? (file.text ?? "") : null,
    picture: file.kind === "image" ? `data:${file.mime};base64,${file.data.toString("base64")}` : null,
  };
}

/** A user's memories for an admin, after recording why. */
export async function reviewMemories(db: Db, adminId: string, userId: string, reason: string) {
  if (!adminAccessEnabled()) throw new AdminAccessDisabledError();
  const why = reasonSchema.parse(reason);
  if (!(await db.user.findUnique({ where: { id: userId }, select: { id: true } }))) throw new NotFoundError("thread");
  await recordAudit(db, { actorId: adminId, subjectUserId: userId, action: "memory.view", reason: why });
  return listMemories(await userContext(db, userId), {});
}

/** What the user sees on /settings/data: every admin action about them. */
export async function auditAboutUser(db: Db, userId: string) {
  const rows = await db.auditLog.findMany({
    where: { subjectUserId: userId },
    orderBy: { at: "desc" },
    take: 500,
    include: { actor: { select: { name: true, email: true } } },
  });
  return rows.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    action: r.action,
    threadId: r.threadId,
    reason: r.reason,
    actor: r.actor ? r.actor.name || r.actor.email : "A former administrator",
  }));
}

export const auditFilterSchema = z.object({
  action: z.enum(AUDIT_ACTIONS).optional().catch(undefined),
  actor: z.string().trim().max(254).optional(),
  subject: z.string().trim().max(254).optional(),
  from: z.iso.date().optional(),
  to: z.iso.date().optional(),
});

/** The audit log page: newest first, filtered by action, actor/subject email and date. */
export async function listAudit(db: Db, input: z.input<typeof auditFilterSchema>) {
  const f = auditFilterSchema.parse(input);
  const rows = await db.auditLog.findMany({
    where: {
      ...(f.action ? { action: f.action } : {}),
      ...(f.actor ? { actor: { email: { contains: f.actor.toLowerCase() } } } : {}),
      ...(f.subject ? { subject: { email: { contains: f.subject.toLowerCase() } } } : {}),
      ...(f.from || f.to
        ? {
            at: {
              ...(f.from ? { gte: new Date(f.from) } : {}),
              ...(f.to ? { lt: new Date(new Date(f.to).getTime() + 86_400_000) } : {}),
            },
          }
        : {}),
    },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take: 200,
    include: { actor: { select: { email: true } }, subject: { select: { email: true } } },
  });
  return rows.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    action: r.action,
    actor:
      r.actor?.email ??
      (r.actorId ? r.actorId : r.action === "user.delete" && !r.actorId ? "(the user)" : "(deleted account)"),
    subject: r.subject?.email ?? r.subjectUserId ?? "(deleted account)",
    threadId: r.threadId,
    reason: r.reason,
  }));
}
