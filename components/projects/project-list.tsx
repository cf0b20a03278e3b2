"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useCallback, useEffect, useState } from "react";
import { toast } from "sonner";
import { ChevronRight, Folder, FolderPlus, Users } from "lucide-react";
import { listThreadsAction } from "@/app/(app)/c/actions";
import type { ThreadSummary } from "@/lib/chat/threads";
import { listProjectsAction } from "@/app/(app)/p/actions";
import type { ProjectSummary } from "@/lib/projects/projects";
import { cn } from "@/lib/cn";
import { PROJECTS_CHANGED } from "./events";

/** The user's projects, kept current across the page (creating, renaming, deleting one). */
export function useProjects() {
  const [projects, setProjects] = useState<ProjectSummary[] | null>(null);
  const load = useCallback(async () => {
    const r = await listProjectsAction();
    if (r.ok) setProjects(r.data);
    else toast.error(r.error);
  }, []);
  useEffect(() => {
    const first = setTimeout(() => void load(), 0);
    window.addEventListener(PROJECTS_CHANGED, load);
    return () => {
      clearTimeout(first);
      window.removeEventListener(PROJECTS_CHANGED, load);
    };
  }, [load]);
  return projects;
}

/** The user's projects, or none while they load. */
export function useProjectList(): ProjectSummary[] {
  return useProjects() ?? [];
}

/** One project in the sidebar: its page, and (opened) its newest chats under it. */
function ProjectEntry({ project: p, pathname }: { project: ProjectSummary; pathname: string }) {
  const active = pathname === `/p/${p.id}` || pathname.startsWith(`/p/${p.id}/`);
  const [open, setOpen] = useState(false);
  const [threads, setThreads] = useState<ThreadSummary[] | null>(null);
  async function toggle() {
    const next = !open;
    setOpen(next);
    if (next) {
      const r = await listThreadsAction({ project: p.id, limit: 10 });
      if (r.ok) setThreads(r.data.threads);
      else toast.error(r.error);
    }
  }
  return (
    <div className="grid grid-cols-[minmax(0,1fr)]">
      <div className={cn("flex min-w-0 items-center rounded-md", active ? "bg-accent" : "hover:bg-accent/60")}>
        <button
          type="button"
          onClick={() => void toggle()}
          aria-expanded={open}
          aria-label={open ? `Hide the chats of ${p.name}` : `Show the chats of ${p.name}`}
          className="rounded p-1.5 text-muted-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
        >
          <ChevronRight className={cn("h-3.5 w-3.5 transition-transform", open && "rotate-90")} aria-hidden />
        </button>
        <Link
          href={`/p/${p.id}`}
          aria-current={active ? "page" : undefined}
          className="flex min-w-0 flex-1 items-center gap-2 rounded-md py-1.5 pr-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
        >
          {p.shared ? (
            <Users className="h-4 w-4 shrink-0 text-muted-foreground" aria-label="Shared" />
          ) : (
            <Folder className="h-4 w-4 shrink-0 text-muted-foreground" aria-hidden />
          )}
          <span className="truncate">{p.name}</span>
          <span className="ml-auto shrink-0 text-xs text-muted-foreground">{p.threads || ""}</span>
        </Link>
      </div>
      {open && (
        <ul
          className="ml-6 grid grid-cols-[minmax(0,1fr)] gap-0.5 border-l border-border pl-2"
          data-testid="project-threads-nav"
        >
          {(threads ?? []).map((t) => (
            <li key={t.id}>
              <Link
                href={`/c/${t.id}`}
                aria-current={pathname === `/c/${t.id}` ? "page" : undefined}
                className={cn(
                  "block truncate rounded-md px-2 py-1 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring",
                  pathname === `/c/${t.id}` ? "bg-accent" : "hover:bg-accent/60",
                )}
              >
                {t.title ?? "Untitled"}
              </Link>
            </li>
          ))}
          {threads && !threads.length && <li className="px-2 py-1 text-xs text-muted-foreground">No chats yet.</li>}
          <li>
            <Link href={`/p/${p.id}/chat`} className="block px-2 py-1 text-xs text-primary hover:underline">
              New chat in {p.name}
            </Link>
          </li>
        </ul>
      )}
    </div>
  );
}

/** The sidebar's projects: each opens its page (its chats, a new chat in it, its settings) or its chats below it. */
export function ProjectList() {
  const loaded = useProjects();
  const projects = loaded ?? [];
  const pathname = usePathname();
  return (
    <nav aria-label="Projects" className="grid grid-cols-[minmax(0,1fr)] gap-0.5" data-testid="project-list">
      <div className="flex items-center justify-between px-2 text-xs text-muted-foreground">
        <span>Projects</span>
        <Link
          href="/p/new"
          className="rounded p-1 hover:bg-accent focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          aria-label="New project"
          title="New project"
        >
          <FolderPlus className="h-4 w-4" aria-hidden />
        </Link>
      </div>
      {projects.map((p) => (
        <ProjectEntry key={p.id} project={p} pathname={pathname} />
      ))}
      {loaded && !projects.length && (
        <Link href="/p/new" className="px-2 py-1 text-xs text-muted-foreground hover:underline">
          Group chats and memories in a project
        </Link>
      )}
    </nav>
  );
}
