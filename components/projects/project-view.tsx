"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { toast } from "sonner";
import { MessageSquarePlus, Trash2, Users } from "lucide-react";
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
import { leaveProjectAction, shareProjectAction } from "@/app/(app)/p/actions";
import { ProjectPeople, type ProjectSharing } from "./project-people";
import { ProjectMemories } from "./project-memories";

/** A project's page: its chats, a new chat in it, its settings, and deleting it. */
export function ProjectView({
  project,
  threads,
  models,
  sharing = null,
}: {
  project: ProjectSummary;
  threads: ThreadSummary[];
  models: PickerModel[];
  /** A shared project's people, memories and the viewer's role (null: the user's own project). */
  sharing?: ProjectSharing | null;
}) {
  const router = useRouter();
  const canWrite = project.role !== "viewer";
  const authorName = (id: string | null | undefined) =>
    sharing?.members.find((m) => m.userId === id)?.name ??
    sharing?.members.find((m) => m.userId === id)?.email ??
    "a former member";

  async function share() {
    const msg =
      `Share "${project.name}"? Its chats and memories become the project's (sealed under its own key), marked as ` +
      "yours, and the people you invite will read them. Your general memories stay yours.";
    if (!window.confirm(msg)) return;
    const r = await shareProjectAction(project.id);
    if (!r.ok) return toast.error(r.error);
    window.dispatchEvent(new Event(PROJECTS_CHANGED));
    toast.success("Shared: now invite people.");
    router.refresh();
  }

  async function leave() {
    const chats = sharing?.keepLeaversChats ? "Your chats here stay in the project" : "Your chats here are deleted";
    const msg = `Leave "${project.name}"? ${chats}, and so are the memories only you taught it.`;
    if (!window.confirm(msg)) return;
    const r = await leaveProjectAction(project.id);
    if (!r.ok) return toast.error(r.error);
    window.dispatchEvent(new Event(PROJECTS_CHANGED));
    toast.success("You left the project.");
    router.push("/");
  }

  async function remove() {
    const what = `${count(project.threads, "chat")} and ${count(project.memories, "memory", "memories")}`;
    const everyone = sharing ? ` for all ${count(sharing.members.length, "member")}` : "";
    if (!window.confirm(`Delete the project "${project.name}" with its ${what}${everyone}? This cannot be undone.`))
      return;
    const r = await deleteProjectAction(project.id);
    if (!r.ok) return toast.error(r.error);
    window.dispatchEvent(new Event(PROJECTS_CHANGED));
    window.dispatchEvent(new Event(THREADS_CHANGED));
    toast.success("Project deleted.");
    router.push("/");
  }

  return (
    <div className="h-full overflow-y-auto">
      <div className="mx-auto grid w-full max-w-2xl grid-cols-[minmax(0,1fr)] gap-8 px-4 py-8">
        <header className="flex flex-wrap items-center gap-3">
          <h1 className="min-w-0 flex-1 break-words text-xl font-semibold" data-testid="project-name">
            {project.name}
          </h1>
          {sharing && (
            <span className="rounded bg-muted px-1.5 py-0.5 text-xs text-muted-foreground" data-testid="project-role">
              shared · you are{" "}
              {project.role === "owner" ? "the owner" : `a${project.role === "editor" ? "n" : ""} ${project.role}`}
            </span>
          )}
          {canWrite && (
            <Link href={`/p/${project.id}/chat`} className={buttonVariants({})} data-testid="project-new-chat">
              <MessageSquarePlus className="h-4 w-4" aria-hidden /> New chat in project
            </Link>
          )}
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
                      {sharing && (
                        <span data-testid="thread-author">
                          {t.authorId === sharing.me ? "you" : authorName(t.authorId)} ·{" "}
                        </span>
                      )}
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
          {!sharing && (
            <p className="mt-2 text-xs text-muted-foreground">
              {count(project.memories, "memory", "memories")} learned in this project ·{" "}
              <Link href={`/settings/memory?scope=${project.id}`} className="underline">
                see them on the memory page
              </Link>
            </p>
          )}
        </section>
        {sharing && (
          <ProjectMemories
            projectId={project.id}
            memories={sharing.memories}
            conflicts={sharing.conflicts}
            canEdit={canWrite}
          />
        )}
        {sharing && <ProjectPeople projectId={project.id} sharing={sharing} />}
        {canWrite && (
          <section aria-labelledby="project-settings" className="grid gap-3">
            <h2 id="project-settings" className="text-sm font-medium">
              Settings
            </h2>
            <ProjectForm project={project} models={models} />
          </section>
        )}
        <section className="border-t border-border pt-4">
          {!sharing && (
            <Button
              variant="outline"
              className="mr-2"
              onClick={() => void share()}
              data-testid="project-share-existing"
            >
              <Users className="h-4 w-4" aria-hidden /> Share this project
            </Button>
          )}
          {project.role === "owner" ? (
            <Button variant="outline" onClick={() => void remove()} className="text-destructive">
              <Trash2 className="h-4 w-4" aria-hidden /> Delete project
            </Button>
          ) : (
            <Button variant="outline" onClick={() => void leave()} data-testid="project-leave">
              Leave project
            </Button>
          )}
        </section>
      </div>
    </div>
  );
}
