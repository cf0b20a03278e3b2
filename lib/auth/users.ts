// Accounts: registration, credential checks, roles. Every function takes the
// database explicitly so tests can run it against PGlite and PostgreSQL.
import { joinInvitedProjects } from "@/lib/projects/invites";
import { admitSignIn, recordSignInFailure, recordSignInSuccess } from "./signin-throttle";
import { isKnownDevice } from "./device";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { Prisma, type Role, type User } from "@/lib/generated/prisma/client";
import { getConfig } from "@/lib/config";
import { dummyHash, hashPassword, verifyPassword } from "./password";
import { consume } from "./rate-limit";
import { admitRegistration, notFirstAnyMore } from "./registration";
import { EmailTakenError, LastAdminError } from "@/lib/errors";
import { cleanText } from "@/lib/text/policy";
import { mailConfigured, publicLink, sendMailLater } from "@/lib/mail/mailer";

export const emailSchema = z
  .string({ error: "Enter your email address." })
  .trim()
  .toLowerCase()
  .max(254, "That email address is too long.")
  .pipe(z.email({ error: "Enter a valid email address." }));

export function registerSchema() {
  const min = getConfig().passwordMinLength;
  return z.object({
    name: z
      .string()
      .transform(cleanText)
      .pipe(z.string().trim().max(100, "Name is at most 100 characters."))
      .optional()
      .transform((v) => v || undefined),
    email: emailSchema,
    password: z
      .string({ error: "Enter a password." })
      .min(min, `Password must be at least ${min} characters.`)
      .max(256, "Password is at most 256 characters."),
  });
}

export const signInSchema = z.object({
  email: emailSchema,
  password: z.string().min(1, "Enter your password.").max(256),
});

// Serialises account creation and admin changes, so that exactly one account
// can be the first admin and the last active admin cannot be removed.
const FIRST_USER_LOCK = 727_073_70;
type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

/** Takes the accounts lock for the rest of the transaction. */
export const lockAccounts = (tx: Tx) => tx.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_USER_LOCK}::bigint)`;
/** Active admins other than `userId` (call under lockAccounts). */
export const otherActiveAdmins = (tx: Tx, userId: string) =>
  tx.user.count({ where: { role: "ADMIN", disabled: false, NOT: { id: userId } } });

/** Creates a user; the first account on an empty database becomes ADMIN. */
export async function createUser(
  db: Db,
  data: {
    email: string;
    name?: string | null;
    passwordHash?: string | null;
    image?: string | null;
    emailVerified?: Date | null;
  },
  /** Admitted only as the first account (admitRegistration): refused if another was created meanwhile. */
  admitted: { asFirst: boolean } = { asFirst: false },
): Promise<User> {
  try {
    return await db.$transaction(async (tx) => {
      await lockAccounts(tx);
      const admins = await tx.user.count({ where: { role: "ADMIN" } });
      const anyone = admins > 0 || (await tx.user.count()) > 0;
      if (anyone && admitted.asFirst) throw notFirstAnyMore();
      const user = await tx.user.create({
        data: { ...data, email: data.email.toLowerCase(), role: anyone ? "USER" : "ADMIN" },
      });
      // Shared projects that invited this address before it had an account (when the mode vouches for it).
      await joinInvitedProjects(tx, user);
      return user;
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") throw new EmailTakenError();
    throw e;
  }
}

export async function registerWithPassword(
  db: Db,
  input: { name?: string; email: string; password: string },
  ip: string,
  invite?: string,
): Promise<User> {
  const data = registerSchema().parse(input);
  await consume(db, [["register-ip", ip]]);
  // Who may register is decided before whether the email is taken, so a closed server says nothing about its accounts.
  const admitted = await admitRegistration(db, data.email, { token: invite });
  if (await db.user.findUnique({ where: { email: data.email }, select: { id: true } })) throw new EmailTakenError();
  const passwordHash = await hashPassword(data.password);
  return createUser(db, { email: data.email, name: data.name, passwordHash }, admitted);
}

/**
 * Registration as the form does it, without telling anyone whether the email
 * already has an account: an existing email costs the same password hash and
 * ends the same way (null instead of the new user). With email configured, the
 * address's owner is told either way: "your account is ready" or "someone tried
 * to register with your email".
 */
export async function registerAccount(
  db: Db,
  input: { name?: string; email: string; password: string },
  ip: string,
  invite?: string,
): Promise<User | null> {
  const user = await registerWithPassword(db, input, ip, invite).catch(async (e) => {
    if (!(e instanceof EmailTakenError)) throw e;
    await hashPassword(input.password); // the time a new account would have taken
    return null;
  });
  const email = emailSchema.parse(input.email);
  if (mailConfigured()) sendMailLater(user ? welcomeMail(email) : alreadyRegisteredMail(email));
  return user;
}

const welcomeMail = (to: string) => ({
  to,
  subject: "Your Mnemo account is ready",
  text: `Your Mnemo account for ${to} is ready. Sign in here:\n${publicLink("/signin")}\n\nIf you did not create it, tell the server's administrator.\n`,
});

const alreadyRegisteredMail = (to: string) => ({
  to,
  subject: "Someone tried to create a Mnemo account with your email",
  text:
    `Someone (perhaps you) tried to create a Mnemo account for ${to}, which already has one, so nothing changed.\n\n` +
    `Sign in: ${publicLink("/signin")}\nForgot your password? ${publicLink("/forgot-password")}\n`,
});

/**
 * Checks an email and password. Returns the user or null, never saying which
 * part was wrong. Rate-limited per IP and per email before any hash is checked.
 */
/**
 * Email and password, throttled (lib/auth/signin-throttle.ts). `cookie` is the
 * request's Cookie header: a browser that signed in to this account before is
 * not held back by others' failures.
 */
export async function verifyCredentials(
  db: Db,
  input: unknown,
  ip: string,
  opts: { cookie?: string | null } = {},
): Promise<User | null> {
  const parsed = signInSchema.safeParse(input);
  if (!parsed.success) return null;
  const { email, password } = parsed.data;
  await consume(db, [["signin-ip", ip]]);
  await admitSignIn(db, email, ip, isKnownDevice(opts.cookie, email));
  const user = await db.user.findUnique({ where: { email } });
  const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash()));
  if (!user || !user.passwordHash || !ok || user.disabled) {
    await recordSignInFailure(db, email, ip);
    return null;
  }
  await recordSignInSuccess(db, email, ip);
  return user;
}

/** The user behind a session, if it still exists, is enabled, and the session (`sid`) was not signed out. */
export async function activeUser(db: Db, id: string, sid?: string) {
  return db.user.findFirst({
    where: { id, disabled: false, ...(sid ? { signedOutSessions: { none: { sid } } } : {}) },
    select: {
      id: true,
      email: true,
      name: true,
      image: true,
      role: true,
      mustChangePassword: true,
      passwordChangedAt: true,
      passwordSid: true,
    },
  });
}

export async function setRole(db: Db, userId: string, role: Role): Promise<void> {
  await db.$transaction(async (tx) => {
    await lockAccounts(tx);
    if (role !== "ADMIN") {
      if ((await otherActiveAdmins(tx, userId)) === 0) throw new LastAdminError();
    }
    await tx.user.update({ where: { id: userId }, data: { role } });
  });
}

export async function setDisabled(db: Db, userId: string, disabled: boolean): Promise<void> {
  await db.$transaction(async (tx) => {
    await lockAccounts(tx);
    if (disabled) {
      const others = await otherActiveAdmins(tx, userId);
      const me = await tx.user.findUnique({ where: { id: userId }, select: { role: true } });
      if (me?.role === "ADMIN" && others === 0) throw new LastAdminError();
    }
    await tx.user.update({ where: { id: userId }, data: { disabled } });
  });
}

/** Signing out: the token's session id stays refused until the token would have expired. */
export async function recordSignOut(
  db: Db,
  token: { sub?: string | null; sid?: unknown; exp?: unknown },
): Promise<void> {
  if (!token.sub || typeof token.sid !== "string") return;
  const expiresAt = typeof token.exp === "number" ? new Date(token.exp * 1000) : new Date(Date.now() + 30 * 86_400_000);
  await db.signedOutSession
    .createMany({ data: [{ sid: token.sid, userId: token.sub, expiresAt }], skipDuplicates: true })
    .catch(() => undefined);
}
