import Link from "next/link";
import { pageUser } from "@/lib/auth/session";

export default async function SettingsPage() {
  const user = await pageUser();
  return (
    <div className="mx-auto grid max-w-3xl gap-4 px-4 py-10">
      <h1 className="text-2xl font-semibold">Settings</h1>
      <p className="text-muted-foreground">Signed in as {user.email}.</p>
      <Link href="/settings/memory" className="rounded-lg border border-border p-4 hover:bg-accent">
        <span className="font-medium">Memory</span>
        <span className="block text-sm text-muted-foreground">
          See, edit and delete what Mnemo remembers about you; pause learning.
        </span>
      </Link>
      <Link href="/settings/password" className="rounded-lg border border-border p-4 hover:bg-accent">
        <span className="font-medium">Password</span>
        <span className="block text-sm text-muted-foreground">Change your password; other devices are signed out.</span>
      </Link>
      <Link href="/settings/keys" className="rounded-lg border border-border p-4 hover:bg-accent">
        <span className="font-medium">API keys</span>
        <span className="block text-sm text-muted-foreground">
          Let other tools (an OpenAI client, Open WebUI, scripts) use your memory through Mnemo.
        </span>
      </Link>
      <Link href="/settings/data" className="rounded-lg border border-border p-4 hover:bg-accent">
        <span className="font-medium">Your data</span>
        <span className="block text-sm text-muted-foreground">
          Export everything, import memories, see administrator access, delete your account.
        </span>
      </Link>
    </div>
  );
}
