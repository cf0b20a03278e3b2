import type { Metadata } from "next";
import Link from "next/link";
import { pageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { PasswordForm } from "@/components/account/password-form";

export const metadata: Metadata = { title: "Password" };
export const dynamic = "force-dynamic";

export default async function PasswordPage() {
  const session = await pageUser({ passwordPage: true });
  const db = await getDb();
  const user = await db.user.findUniqueOrThrow({
    where: { id: session.id },
    select: { passwordHash: true, mustChangePassword: true },
  });
  return (
    <div className="mx-auto grid max-w-md gap-4 px-4 py-10">
      <p className="text-sm">
        <Link className="text-primary hover:underline" href="/settings">
          Settings
        </Link>{" "}
        / Password
      </p>
      <h1 className="text-2xl font-semibold">{user.passwordHash ? "Change your password" : "Set a password"}</h1>
      {user.mustChangePassword && (
        <p className="rounded-md bg-amber-500/10 p-3 text-sm" role="status" data-testid="password-required">
          An administrator gave you a temporary password. Choose your own to go on.
        </p>
      )}
      <p className="text-sm text-muted-foreground">
        At least {getConfig().passwordMinLength} characters. Other devices signed in to this account are signed out.
      </p>
      <PasswordForm hasPassword={!!user.passwordHash} minLength={getConfig().passwordMinLength} />
    </div>
  );
}
