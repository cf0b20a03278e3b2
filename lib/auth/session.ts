// Session checks for pages, route handlers and server actions. Each of them
// calls one of these itself: the proxy is a convenience, not the guard.
import { notFound, redirect } from "next/navigation";
import { auth } from "@/auth";
import { ForbiddenError, TemporaryPasswordError, UnauthorizedError } from "@/lib/errors";

export type SessionUser = {
  id: string;
  role: "USER" | "ADMIN";
  email?: string | null;
  name?: string | null;
  sid?: string;
  mustChangePassword?: boolean;
};

export async function currentUser(): Promise<SessionUser | null> {
  const session = await auth();
  return session?.user?.id ? (session.user as SessionUser) : null;
}

/**
 * For server actions and route handlers: throws when signed out, and while a
 * temporary password is in use (only choosing a password is allowed then).
 */
export async function requireUser(opts: { temporaryPasswordAllowed?: boolean } = {}): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) throw new UnauthorizedError();
  if (user.mustChangePassword && !opts.temporaryPasswordAllowed) throw new TemporaryPasswordError();
  return user;
}

export async function requireAdmin(): Promise<SessionUser> {
  const user = await requireUser();
  if (user.role !== "ADMIN") throw new ForbiddenError();
  return user;
}

/**
 * For admin pages: a non-admin gets the not-found page, as the admin layout gives (layout and page render at once,
 * so a page that threw ForbiddenError logged a stack trace for every such visit).
 */
export async function pageAdmin(): Promise<SessionUser> {
  const user = await pageUser();
  if (user.role !== "ADMIN") notFound();
  return user;
}

/** For pages: redirects to sign-in when signed out, and to the password page while a temporary password is in use. */
export async function pageUser(opts: { passwordPage?: boolean } = {}): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect("/signin");
  if (user.mustChangePassword && !opts.passwordPage) redirect("/settings/password?required=1");
  return user;
}
