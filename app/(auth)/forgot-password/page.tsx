import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ForgotPasswordForm } from "@/components/auth/auth-forms";
import { currentUser } from "@/lib/auth/session";
import { mailConfigured } from "@/lib/mail/mailer";

export const metadata: Metadata = { title: "Forgot your password" };
export const dynamic = "force-dynamic";

export default async function ForgotPasswordPage() {
  if (await currentUser()) redirect("/settings/password");
  const mail = mailConfigured();
  return (
    <Card>
      <CardHeader>
        <CardTitle>Forgot your password?</CardTitle>
        <CardDescription>
          {mail ? "We'll email you a link to choose a new one." : "Your administrator can let you back in."}
        </CardDescription>
      </CardHeader>
      <CardContent className="grid gap-2">
        {mail ? (
          <ForgotPasswordForm />
        ) : (
          <div className="grid gap-3 text-sm" data-testid="no-mail">
            <p>
              This server does not send email. Ask an administrator of this Mnemo to set a temporary password for you
              (on your account&apos;s admin page: &ldquo;Set a temporary password&rdquo;); you choose your own when you
              next sign in.
            </p>
            <Link href="/signin" className="font-medium text-primary underline-offset-4 hover:underline">
              Back to sign in
            </Link>
          </div>
        )}
      </CardContent>
    </Card>
  );
}
