// Changing passwords: a user changes their own (the current one is checked,
// rate-limited like sign-in); an admin sets a temporary one, shown once, which
// must be changed at the next sign-in. Either way every other session ends:
// tokens issued before `passwordChangedAt` are refused, except the session
// that made the change (`passwordSid`).
import crypto from "node:crypto";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { AppError, NotFoundError, WrongPasswordError } from "@/lib/errors";
import { hashPassword, verifyPassword } from "./password";
import { consume } from "./rate-limit";

export function newPasswordSchema() {
  const min = getConfig().passwordMinLength;
  return z
    .object({
      current: z.string().max(256).optional(),
      next: z
        .string({ error: "Enter a new password." })
        .min(min, `Password must be at least ${min} characters.`)
        .max(256, "Password is at most 256 characters."),
      confirm: z.string().max(256),
    })
    .refine((v) => v.next === v.confirm, { message: "The two new passwords differ.", path: ["confirm"] });
}

/** The user changes their password; `sid` is the session doing it (it stays signed in). */
export async function changePassword(
  db: Db,
  userId: string,
  sid: string | undefined,
  input: z.input<ReturnType<typeof newPasswordSchema>>,
): Promise<void> {
  const { current, next } = newPasswordSchema().parse(input);
  const user = await db.user.findUnique({ where: { id: userId }, select: { email: true, passwordHash: true } });
  if (!user) throw new NotFoundError("account");
  if (user.passwordHash) {
    await consume(db, [["signin-email", user.email]]);
    if (!current || !(await verifyPassword(current, user.passwordHash))) throw new WrongPasswordError();
    if (await verifyPassword(next, user.passwordHash))
      throw new AppError("Choose a password you have not used here just now.", 400);
  }
  await db.user.update({
    where: { id: userId },
    data: {
      passwordHash: await hashPassword(next),
      mustChangePassword: false,
      passwordChangedAt: new Date(),
      passwordSid: sid ?? null,
    },
  });
}

/** An admin sets a temporary password (returned once, never stored in clear); the user must change it. */
export async function setTemporaryPassword(db: Db, userId: string): Promise<string> {
  // 16 characters from a 56-symbol alphabet without look-alikes (about 93 bits).
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  const temporary = Array.from(crypto.randomBytes(16), (b) => alphabet[b % alphabet.length]).join("");
  await db.user.update({
    where: { id: userId },
    data: {
      passwordHash: await hashPassword(temporary),
      mustChangePassword: true,
      passwordChangedAt: new Date(),
      passwordSid: null,
    },
  });
  return temporary;
}

/** Whether a session token survives the user's last password change. */
export function sessionOutlivesPasswordChange(
  user: { passwordChangedAt: Date | null; passwordSid: string | null },
  token: { authAt?: unknown; sid?: unknown },
): boolean {
  if (!user.passwordChangedAt) return true;
  if (typeof token.sid === "string" && token.sid === user.passwordSid) return true;
  return typeof token.authAt === "number" && token.authAt >= user.passwordChangedAt.getTime();
}
