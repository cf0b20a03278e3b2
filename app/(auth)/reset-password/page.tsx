import type { Metadata } from "next";
import Link from "next/link";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ResetPasswordForm } from "@/components/auth/auth-forms";
import { getDb } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { resetLinkValid } from "@/lib/auth/password-reset";

export const metadata: Metadata = { title: "Choose a new password", referrer: "no-referrer" };
export const dynamic = "force-dynamic";

export default async function ResetPasswordPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token } = await searchParams;
  const valid = typeof token === "string" && (await resetLinkValid(await getDb(), token));
  return (
    <Card>
      <CardHeader>
        <CardTitle>Choose a new password</CardTitle>
        <CardDescription>Every device signed in to your account will be signed out.</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-2">
        {valid ? (
          <ResetPasswordForm token={token} minLength={getConfig().passwordMinLength} />
        ) : (
          <div className="grid gap-3 text-sm" data-testid="reset-link-invalid">
            <p role="alert">This reset link has expired or was already used.</p>
            <Link href="/forgot-password" className="font-medium text-primary underline-offset-4 hover:underline">
              Ask for a new link
            </Link>
          </div>
        )}
      </CardContent>
    </Card>
  );
}
