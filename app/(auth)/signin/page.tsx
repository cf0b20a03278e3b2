import type { Metadata } from "next";
import { DATABASE_DOWN } from "@/lib/errors";
import { redirect } from "next/navigation";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { SignInForm } from "@/components/auth/auth-forms";
import { OAuthButtons } from "@/components/auth/oauth-buttons";
import { oauthProviders } from "@/auth";
import { currentUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{
    callbackUrl?: string;
    error?: string;
    code?: string;
    deleted?: string;
    email?: string;
    registered?: string;
  }>;
}) {
  if (await currentUser()) redirect("/");
  const { callbackUrl, error, code, deleted, email, registered } = await searchParams;
  // A new install has nobody to welcome back: its first visitor makes the first account (the admin).
  // (A database that cannot be read says so at sign-in, as before.)
  const anyone = await getDb()
    .then((db) => db.user.findFirst({ select: { id: true } }))
    .catch(() => true);
  if (!deleted && !registered && !anyone) redirect("/register");
  return (
    <Card>
      <CardHeader>
        <CardTitle>Sign in</CardTitle>
        <CardDescription>Welcome back to Mnemo.</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-2">
        {registered && (
          <div role="status" className="mb-2 rounded-md bg-muted px-3 py-2 text-sm" data-testid="registered-next">
            <p className="font-medium">Last step: sign in with the password you just chose.</p>
            <p className="mt-1 text-muted-foreground">
              Registration never tells whether an email already has an account. If this one had, sign in with its
              existing password.
            </p>
          </div>
        )}
        {deleted && (
          <p role="status" className="mb-2 rounded-md bg-muted px-3 py-2 text-sm">
            Your account and all its data have been deleted.
          </p>
        )}
        {error && (
          <p role="alert" className="mb-2 text-sm text-destructive">
            {error === "AccessDenied"
              ? "This account cannot sign in."
              : code === "unavailable"
                ? DATABASE_DOWN
                : code === "rate_limited"
                  ? "Too many sign-in attempts. Wait a few minutes and try again."
                  : "Sign-in failed. Try again."}
          </p>
        )}
        <OAuthButtons providers={oauthProviders()} callbackUrl={callbackUrl} />
        <SignInForm callbackUrl={callbackUrl} email={typeof email === "string" ? email.slice(0, 320) : undefined} />
      </CardContent>
    </Card>
  );
}
