import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { RegisterForm } from "@/components/auth/auth-forms";
import { OAuthButtons } from "@/components/auth/oauth-buttons";
import { oauthProviders } from "@/auth";
import { currentUser } from "@/lib/auth/session";
import { getConfig } from "@/lib/config";

export const metadata: Metadata = { title: "Create an account" };

export default async function RegisterPage() {
  if (await currentUser()) redirect("/");
  return (
    <Card>
      <CardHeader>
        <CardTitle>Create your account</CardTitle>
        <CardDescription>Your conversations and memories stay on this server.</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-2">
        <OAuthButtons providers={oauthProviders()} />
        <RegisterForm minLength={getConfig().passwordMinLength} />
      </CardContent>
    </Card>
  );
}
