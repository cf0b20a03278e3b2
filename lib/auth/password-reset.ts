// Forgotten passwords. With email (MNEMO_SMTP_URL) a user asks for a link, valid
// one hour and once, that sets a new password and ends every session. The
// answer is the same whether or not the email has an account. Without email an
// admin sets a temporary password (lib/auth/password-change.ts).
// Reset tokens are Auth.js verification tokens ("reset:<email>", stored hashed).
import crypto from "node:crypto";
import type { Db } from "@/lib/db/client";
import { AppError, ResetLinkError, logError } from "@/lib/errors";
import { mailConfigured, publicLink, sendMailLater } from "@/lib/mail/mailer";
import { hashPassword } from "./password";
import { newPasswordSchema } from "./password-change";
import { consume } from "./rate-limit";
import { emailSchema } from "./users";

export const RESET_MINUTES = 60;
const hash = (token: string) => crypto.createHash("sha256").update(token).digest("hex");
const identifier = (email: string) => `reset:${email}`;

/**
 * Emails a reset link when `email` has an account (rate-limited per address and
 * network). Resolves the same way, after the same work, whether it has one or
 * not: the account lookup, the token and the mail happen after the answer, so
 * its timing says nothing about the email.
 */
export async function requestPasswordReset(db: Db, rawEmail: string, ip: string, now = new Date()): Promise<void> {
  if (!mailConfigured())
    throw new AppError("This server cannot send email. Ask an administrator to set a temporary password for you.", 400);
  const email = emailSchema.parse(rawEmail);
  await consume(db, [
    ["reset-ip", ip],
    ["reset-email", email],
  ]);
  void issueResetLink(db, email, now).catch((e) =>
    logError(crypto.randomUUID().slice(0, 8), "password reset link", e, true),
  );
}

async function issueResetLink(db: Db, email: string, now: Date): Promise<void> {
  const user = await db.user.findUnique({ where: { email }, select: { id: true, disabled: true } });
  if (!user || user.disabled) return;
  const token = crypto.randomBytes(32).toString("base64url");
  // One live link per account: asking again replaces the previous one.
  await db.$transaction([
    db.verificationToken.deleteMany({ where: { identifier: identifier(email) } }),
    db.verificationToken.create({
      data: {
        identifier: identifier(email),
        token: hash(token),
        expires: new Date(now.getTime() + RESET_MINUTES * 60_000),
      },
    }),
  ]);
  sendMailLater({
    to: email,
    subject: "Reset your Mnemo password",
    text:
      `Someone (we hope you) asked to reset the password of your Mnemo account.\n\n` +
      `Choose a new password here (the link works for ${RESET_MINUTES} minutes, once):\n${publicLink(`/reset-password?token=${token}`)}\n\n` +
      `If it was not you, ignore this message: your password stays as it is.\n`,
  });
}

async function liveToken(db: Db, token: string, now: Date) {
  if (!token || token.length > 200) return null;
  const row = await db.verificationToken.findFirst({
    where: { token: hash(token), identifier: { startsWith: "reset:" }, expires: { gt: now } },
  });
  return row;
}

/** Whether a reset link can still be used (for the page to say so before the form is filled). */
export async function resetLinkValid(db: Db, token: string, now = new Date()): Promise<boolean> {
  return !!(await liveToken(db, token, now));
}

/** Sets the new password from a reset link, uses the link up and signs every session out. */
export async function resetPassword(
  db: Db,
  token: string,
  input: { next: string; confirm: string },
  now = new Date(),
): Promise<{ email: string }> {
  const { next } = newPasswordSchema().parse(input);
  const row = await liveToken(db, token, now);
  if (!row) throw new ResetLinkError();
  const email = row.identifier.slice("reset:".length);
  const passwordHash = await hashPassword(next);
  await db.$transaction(async (tx) => {
    // Deleting the link first makes a second use (even a concurrent one) fail.
    const used = await tx.verificationToken.deleteMany({ where: { identifier: row.identifier, token: row.token } });
    if (!used.count) throw new ResetLinkError();
    const changed = await tx.user.updateMany({
      where: { email, disabled: false },
      data: { passwordHash, mustChangePassword: false, passwordChangedAt: now, passwordSid: null },
    });
    if (!changed.count) throw new ResetLinkError();
  });
  return { email };
}
