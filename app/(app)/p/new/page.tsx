import { pageUser } from "@/lib/auth/session";
import { ProjectForm } from "@/components/projects/project-form";
import { chatSetup } from "@/lib/chat/chat-setup";
import { getDb } from "@/lib/db/client";

export const dynamic = "force-dynamic";

export default async function NewProjectPage() {
  await pageUser();
  const { models } = await chatSetup(await getDb());
  return (
    <div className="mx-auto w-full max-w-2xl overflow-y-auto px-4 py-8">
      <h1 className="text-xl font-semibold">New project</h1>
      <p className="mt-1 text-sm text-muted-foreground">
        A project keeps its chats, its instructions and what Mnemo learns in it together.
      </p>
      <div className="mt-6">
        <ProjectForm models={models} />
      </div>
    </div>
  );
}
