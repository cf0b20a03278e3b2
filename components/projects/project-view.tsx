"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { toast } from "sonner";
import { MessageSquarePlus, Trash2 } from "lucide-react";
import { Button, buttonVariants } from "@/components/ui/button";
import { deleteProjectAction } from "@/app/(app)/p/actions";
import type { ProjectSummary } from "@/lib/projects/projects";
import type { ThreadSummary } from "@/lib/chat/threads";
import { count } from "@/lib/text/plural";
import { THREADS_CHANGED } from "@/components/chat/events";
import { ProjectForm } from "./project-form";
import type { PickerModel } from "@/lib/chat/chat-setup";
import { PROJECTS_CHANGED } from "./events";
import { LocalDate } from "@/components/ui/local-date";

/** A project's page: its chats, a new chat in it, its settings, and deleting it. */
export function ProjectView({
  project,
  threads,
  models,
}: {
  project: ProjectSummary;
  threads: ThreadSummary[];
  models: PickerModel[];
}) {
  const router = useRouter();

  async function remove() {
    const what = `${count(project.threads, "chat")} and ${count(project.memories, "memory", "memories")}`;
    if (!window.confirm(`Delete the project "${project.name}" with its ${what}? This cannot be undone.`)) return;
    const r = await deleteProjectAction(project.id);
    if (!r.ok) return toast.error(r.error);
    window.dispatchEvent(new Event(PROJECTS_CHANGED));
    window.dispatchEvent(new Event(THREADS_CHANGED));
    toast.success("Project deleted.");
    router.push("/");
  }

  return (
    <div className="h-full overflow-y-auto">
      <div className="mx-auto grid w-full max-w-2xl gap-8 px-4 py-8">
        <header className="flex flex-wrap items-center gap-3">
          <h1 className="min-w-0 flex-1 break-words text-xl font-semibold" data-testid="project-name">
            {project.name}
          </h1>
          <Link href={`/p/${project.id}/chat`} className={buttonVariants({})} data-testid="project-new-chat">
            <MessageSquarePlus className="h-4 w-4" aria-hidden /> New chat in project
          </Link>
        </header>
        <section aria-labelledby="project-chats">
          <h2 id="project-chats" className="text-sm font-medium">
            Chats
          </h2>
          {threads.length ? (
            <ul className="mt-2 divide-y divide-border rounded-md border border-border" data-testid="project-threads">
              {threads.map((t) => (
                <li key={t.id}>
                  <Link
                    href={`/c/${t.id}`}
                    className="flex justify-between gap-3 px-3 py-2 text-sm hover:bg-accent focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                  >
                    <span className="truncate">{t.title ?? "Untitled"}</span>
                    <span className="shrink-0 text-xs text-muted-foreground">
                      <LocalDate value={t.lastActivityAt} />
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
          ) : (
            <p className="mt-2 text-sm text-muted-foreground">
              No chats yet. Start one here, or move a chat in from its menu in the sidebar.
            </p>
          )}
          <p className="mt-2 text-xs text-muted-foreground">
            {count(project.memories, "memory", "memories")} learned in this project ·{" "}
            <Link href={`/settings/memory?scope=${project.id}`} className="underline">
              see them on the memory page
            </Link>
          </p>
        </section>
        <section aria-labelledby="project-settings" className="grid gap-3">
          <h2 id="project-settings" className="text-sm font-medium">
            Settings
          </h2>
          <ProjectForm project={project} models={models} />
        </section>
        <section className="border-t border-border pt-4">
          <Button variant="outline" onClick={() => void remove()} className="text-destructive">
            <Trash2 className="h-4 w-4" aria-hidden /> Delete project
          </Button>
        </section>
      </div>
    </div>
  );
}
