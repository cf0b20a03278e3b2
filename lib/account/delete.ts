// Deleting an account: every row that belongs to the user goes in ONE
// transaction (the foreign keys cascade from the User row; the rest is listed
// in USER_DATA), their encryption keys with it (crypto-shredding), and their
// sessions end at the next request (sessions are re-checked against the user).
import type { Db } from "@/lib/db/client";
import { forgetCachedKeys } from "@/lib/crypto/content";
import { lockAccounts, otherActiveAdmins } from "@/lib/auth/users";
import { USER_DATA, tableSql, userRowsSql } from "./user-data";
import { LastAdminError, NotFoundError } from "@/lib/errors";

/** What the user types to confirm deleting their own account. */
export const CONFIRM_PHRASE = "delete my account";

export async function deleteAccount(
  db: Db,
  userId: string,
  by: { actorId: string | null; reason?: string },
): Promise<void> {
  await db.$transaction(async (tx) => {
    await lockAccounts(tx);
    const user = await tx.user.findUnique({ where: { id: userId }, select: { role: true, disabled: true } });
    if (!user) throw new NotFoundError("account");
    if (user.role === "ADMIN" && !user.disabled && (await otherActiveAdmins(tx, userId)) === 0)
      throw new LastAdminError();
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
