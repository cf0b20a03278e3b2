import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { RegisterForm } from "@/components/auth/auth-forms";
import { OAuthButtons } from "@/components/auth/oauth-buttons";
import { oauthProviders } from "@/auth";
import { currentUser } from "@/lib/auth/session";
import { getConfig } from "@/lib/config";
import Link from "next/link";
import { getDb } from "@/lib/db/client";
import { registrationMode } from "@/lib/auth/registration";

export const metadata: Metadata = { title: "Create an account" };

export default async function RegisterPage({
  searchParams,
}: {
  searchParams: Promise<{ invite?: string; email?: string }>;
}) {
  if (await currentUser()) redirect("/");
  const sp = await searchParams;
  const mode = registrationMode();
  // The first account (the admin) can always be created.
  const first = (await (await getDb()).user.count()) === 0;
  const setup = mode !== "open" && first;
  const invite =
    typeof sp.invite === "string" && sp.invite
      ? { token: sp.invite.slice(0, 200), email: String(sp.email ?? "").slice(0, 320) }
      : undefined;
  const closed = !setup && (mode === "closed" || (mode === "invite" && !invite));
  return (
    <Card>
      <CardHeader>
        <CardTitle>Create your account</CardTitle>
        <CardDescription>Your conversations and memories stay on this server.</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-2">
        {first && (
          <p role="status" className="mb-2 rounded-md bg-muted px-3 py-2 text-sm" data-testid="first-account">
            You are the first person here: this account becomes the server&apos;s administrator. It can add people, set
            the model and review usage from Admin in the account menu.
          </p>
        )}
        {closed ? (
          <p className="text-sm" data-testid="registration-closed">
            {mode === "closed"
              ? "Registration is closed on this server. Ask an administrator for an account."
              : "Registration on this server is by invitation. Open the link from your invitation."}{" "}
            <Link href="/signin" className="font-medium text-primary underline-offset-4 hover:underline">
              Sign in
            </Link>
          </p>
        ) : (
          <>
            <OAuthButtons providers={oauthProviders()} />
            <RegisterForm minLength={getConfig().passwordMinLength} invite={invite} />
          </>
        )}
      </CardContent>
    </Card>
  );
}
