// Deleting an account: every row that belongs to the user goes in ONE
// transaction (the foreign keys cascade from the User row; the rest is listed
// in USER_DATA), their encryption keys with it (crypto-shredding), and their
// sessions end at the next request (sessions are re-checked against the user).
import type { Db } from "@/lib/db/client";
import { forgetCachedKeys } from "@/lib/crypto/content";
import { lockAccounts, otherActiveAdmins } from "@/lib/auth/users";
import { USER_DATA, tableSql, userRowsSql } from "./user-data";
import { AppError, LastAdminError, NotFoundError } from "@/lib/errors";
import { leaveAllProjects } from "@/lib/projects/members";

/** What the user types to confirm deleting their own account. */
export const CONFIRM_PHRASE = "delete my account";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

/**
 * What deleting this account means for the instance: a sole admin hands the role to one of `successors` (active
 * accounts) as part of the deletion; the only account returns the instance to its first run.
 */
export async function accountSuccession(db: Db, userId: string) {
  const [me, admins, others] = await Promise.all([
    db.user.findUnique({ where: { id: userId }, select: { role: true, disabled: true } }),
    db.user.count({ where: { role: "ADMIN", disabled: false, NOT: { id: userId } } }),
    db.user.findMany({
      // People only: a shared project's account is no one (lib/projects/access.ts).
      where: { NOT: { id: userId }, kind: "person" },
      select: { id: true, email: true, name: true, disabled: true },
      orderBy: { email: "asc" },
    }),
  ]);
  const soleAdmin = me?.role === "ADMIN" && !me.disabled && admins === 0;
  return {
    soleAdmin,
    onlyAccount: others.length === 0,
    successors: soleAdmin ? others.filter((u) => !u.disabled).map(({ id, email, name }) => ({ id, email, name })) : [],
  };
}

/** A sole admin's deletion promotes `successorId` in the same transaction; without one, only the last account may go. */
async function handOverAdmin(tx: Tx, userId: string, successorId: string | undefined) {
  if (!successorId) {
    if ((await tx.user.count({ where: { NOT: { id: userId }, kind: "person" } })) > 0)
      throw new LastAdminError("You are the only admin: choose who becomes admin when your account is deleted.");
    return;
  }
  const next = await tx.user.findFirst({
    where: { id: successorId, disabled: false, kind: "person", NOT: { id: userId } },
  });
  if (!next) throw new AppError("That account can no longer become admin (deleted or disabled): choose another.");
  await tx.user.update({ where: { id: successorId }, data: { role: "ADMIN" } });
  await tx.auditLog.create({
    data: {
      action: "user.role",
      actorId: userId,
      subjectUserId: successorId,
      detail: { role: "ADMIN", by: "succession" },
    },
  });
}

export async function deleteAccount(
  db: Db,
  userId: string,
  by: { actorId: string | null; reason?: string; successorId?: string },
): Promise<void> {
  await db.$transaction(async (tx) => {
    await lockAccounts(tx);
    const user = await tx.user.findUnique({ where: { id: userId }, select: { role: true, disabled: true } });
    if (!user) throw new NotFoundError("account");
    if (user.role === "ADMIN" && !user.disabled && (await otherActiveAdmins(tx, userId)) === 0)
      await handOverAdmin(tx, userId, by.successorId);
    // Shared projects: their chats and the memories only they taught go; a project they own passes on, or goes.
    await leaveAllProjects(tx, userId);
    for (const [table, entry] of Object.entries(USER_DATA)) {
      if (entry.onDelete === "delete" && table !== "User")
        await tx.$executeRaw`DELETE FROM ${tableSql(table)} WHERE ${userRowsSql(table, userId)}`;
    }
    await tx.$executeRaw`UPDATE "AppSetting" SET "updatedBy" = NULL WHERE "updatedBy" = ${userId}`;
    // Item → Item parent links cascade too, but breaking them first keeps the
    // cascade from walking long branches one level at a time.
    await tx.$executeRaw`UPDATE "Item" SET "parentId" = NULL WHERE ${userRowsSql("Item", userId)}`;
    await tx.$executeRaw`DELETE FROM "User" WHERE id = ${userId}`;
    // The record says an account was deleted, and by whom; it names no one deleted.
    await tx.auditLog.create({
      data: {
        action: "user.delete",
        actorId: by.actorId === userId ? null : by.actorId,
        reason: by.reason ?? null,
        detail: { by: by.actorId === userId || !by.actorId ? "self" : "admin" },
      },
    });
  });
  forgetCachedKeys(userId);
}
