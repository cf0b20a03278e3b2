import type { Metadata } from "next";
import Link from "next/link";
import { headers } from "next/headers";
import { pageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { userContext } from "@/lib/user-context";
import { listApiKeys } from "@/lib/keys/api-keys";
import { listAllProjects } from "@/lib/projects/projects";
import { ApiKeys } from "@/components/keys/api-keys";

export const metadata: Metadata = { title: "API keys" };
export const dynamic = "force-dynamic";

export default async function KeysPage() {
  const user = await pageUser();
  const u = await userContext(await getDb(), user.id);
  const [keys, projects] = await Promise.all([listApiKeys(u), listAllProjects(u)]);
  const h = await headers();
  const base = `${h.get("x-forwarded-proto") ?? "http"}://${h.get("x-forwarded-host") ?? h.get("host") ?? "localhost:3000"}/v1`;
  return (
    <div className="mx-auto grid max-w-3xl gap-6 px-4 py-10">
      <p className="text-sm">
        <Link className="text-primary hover:underline" href="/settings">
          Settings
        </Link>{" "}
        / API keys
      </p>
      <div>
        <h1 className="text-2xl font-semibold">API keys</h1>
        <p className="mt-1 text-sm text-muted-foreground">
          Point any OpenAI client at <code className="rounded bg-muted px-1">{base}</code> with a key: it answers with
          your model and your memory, under the same rules as this app (review, pause, daily limits). Its chats appear
          in your list as “via” the key&apos;s name.
        </p>
      </div>
      <ApiKeys keys={keys} projects={projects.map((p) => ({ id: p.id, name: p.name }))} baseUrl={base} />
    </div>
  );
}
