import { pageUser } from "@/lib/auth/session";

export default async function SettingsPage() {
  const user = await pageUser();
  return (
    <div className="mx-auto max-w-3xl px-4 py-10">
      <h1 className="text-2xl font-semibold">Settings</h1>
      <p className="mt-2 text-muted-foreground">Signed in as {user.email}.</p>
    </div>
  );
}
